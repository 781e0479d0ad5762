"""``trace_replay``: the three trace shapes and their bad lines (a table), prompts that share
exactly the blocks a trace says, the fidelity rule (a planted stall of the replay's event loop
puts it off its timestamps, and the case says so), and the shipped synthetic trace replayed
through the real mlx_lm.server on the zoo: sessions carry their earlier turns, every request
is sent on time."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from harness.scenarios.trace_replay import late_line
from harness.scenarios.trace_replay.prompts import PromptBook, chat_messages, with_history
from harness.scenarios.trace_replay.replay import plan_replay
from harness.scenarios.trace_replay.trace import (
    TraceError,
    TraceFormat,
    TraceRequest,
    read_trace,
)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "suites" / "data" / "traces" / "synthetic.jsonl"


@pytest.mark.parametrize(
    ("name", "text", "shape", "first"),
    [
        (
            "t.jsonl",
            '{"arrival_s": 2.5, "input_tokens": 96, "output_tokens": 8, "prefix_group": "a",'
            ' "prefix_tokens": 64, "session": "s1"}\n'
            '{"arrival_s": 1.0, "input_tokens": 32, "output_tokens": 4}\n',
            TraceFormat.HARNESS,
            TraceRequest(0.0, 32, 4),
        ),
        (
            "m.jsonl",
            '{"timestamp": 27482, "input_length": 1100, "output_length": 52, "hash_ids": [46, 47,'
            ' 48]}\n{"timestamp": 30000, "input_length": 600, "output_length": 5,'
            ' "hash_ids": [46, 9]}\n',
            TraceFormat.MOONCAKE,
            TraceRequest(0.0, 1100, 52, (("hash 46", 512), ("hash 47", 512), ("hash 48", 512))),
        ),
        (
            "b.csv",
            "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
            "5,ChatGPT,472,18,490,Conversation log\n7,GPT-4,1000,0,1000,Conversation log\n"
            "9.5,ChatGPT,30,7,37,API log\n",
            TraceFormat.BURSTGPT,
            TraceRequest(0.0, 472, 18),
        ),
    ],
)
def test_each_trace_shape_is_read_in_arrival_order_from_zero(
    tmp_path: Path, name: str, text: str, shape: TraceFormat, first: TraceRequest
) -> None:
    (tmp_path / name).write_text(text)
    trace = read_trace(tmp_path / name)
    assert trace.format is shape and trace.requests[0] == first
    assert len(trace.requests) == 2  # BurstGPT's failed row (0 response tokens) left out
    assert trace.requests[1].arrival_s > 0


GOOD = '{"arrival_s": 0, "input_tokens": 8, "output_tokens": 4}\n'


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (GOOD + "not json\n", "t.jsonl:2: not JSON"),
        (GOOD.replace(": 0,", ": -1,"), "t.jsonl:1: 'arrival_s' is -1"),
        (GOOD.replace(": 8,", ": 8.5,"), "t.jsonl:1: 'input_tokens' is 8.5; give a whole"),
        ('{"arrival_s": 0, "input_tokens": 8}\n', "t.jsonl:1: 'output_tokens' is None"),
        (GOOD.replace("}", ', "prefix_group": "a"}'), "t.jsonl:1: 'prefix_tokens' is None"),
        ('{"when": 0}\n', "t.jsonl:1: a request of no known shape (fields: when)"),
        (
            GOOD + '{"timestamp": 1, "input_length": 3}\n',
            "t.jsonl:2: this line's fields are not those of a harness trace",
        ),
        ("[1, 2]\n", "t.jsonl:1: a line must be one JSON object"),  # an array, not objects
        ("\n\n", "t.jsonl: the trace holds no request"),
    ],
)
def test_a_bad_trace_is_one_line_naming_the_file_and_line(
    tmp_path: Path, text: str, line: str
) -> None:
    (tmp_path / "t.jsonl").write_text(text)
    with pytest.raises(TraceError) as caught:
        read_trace(tmp_path / "t.jsonl")
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{tmp_path}/{line}"), message


def test_a_missing_trace_says_so(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no such trace file"):
        read_trace(tmp_path / "none.jsonl")


def test_prompts_share_exactly_the_blocks_the_trace_gives() -> None:
    book = PromptBook("m1", lambda text: len(text.split()))
    a = TraceRequest(0, 100, 4, (("sys", 40), ("doc", 30)))
    b = TraceRequest(0, 90, 4, (("sys", 40), ("other", 30)))
    c = TraceRequest(0, 50, 4, (("sys", 40), ("doc", 30)))  # too short for the second block
    ta, tb, tc = (book.own_text(i, r) for i, r in enumerate((a, b, c)))
    sys_block = book.block(("sys", 40))
    assert ta.startswith(sys_block) and tb.startswith(sys_block) and tc.startswith(sys_block)
    assert ta.startswith(sys_block + book.block(("doc", 30)))
    assert not tb.startswith(sys_block + book.block(("doc", 30)))
    assert not tc.startswith(sys_block + book.block(("doc", 30)))
    assert len({ta, tb, tc}) == 3 and "m1-0:" in ta and "m1-1:" in tb


def test_a_later_turn_carries_the_turns_before_it() -> None:
    from harness.scenarios.trace_replay.prompts import Turn

    history = [Turn("first?", "one"), Turn("second?", "two")]
    assert with_history(history, "third?") == "first?one\n\nsecond?two\n\nthird?"
    assert [m["role"] for m in chat_messages(history, "third?")] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]


def test_speedup_scales_the_offsets() -> None:
    book = PromptBook("m", None)
    requests = [TraceRequest(0.0, 16, 2), TraceRequest(3.0, 16, 2)]
    plan = plan_replay(requests, book, speedup=2.0, endpoint="completions", ignore_eos=True)
    assert plan.offsets == (0.0, 1.5)


@pytest.mark.parametrize(
    ("lags", "late"),
    [
        ([0.001] * 20, False),
        ([0.001] * 18 + [0.6, 0.7], False),  # a tenth late: a busy machine's hiccups
        ([0.001] * 17 + [0.6, 0.7, 0.9], True),
        ([], False),
    ],
)
def test_the_fidelity_rule(lags: list[float], late: bool) -> None:
    line = late_line(lags, 0.25)
    assert (line is not None) is late
    if line:
        assert line.startswith("replayed off its timestamps: 3 of 20 requests were sent more")


def test_a_stalled_replay_loop_is_caught_off_its_timestamps() -> None:
    """The planted break: the replay's event loop blocked for 0.6 s just after the start (as a
    client doing work between sends would): the requests due meanwhile go out late, and the
    rule fails the replay."""
    from harness.scenarios.streams.loop import open_loop

    async def send(index: int) -> int:
        return index

    async def stalled() -> list[float]:
        asyncio.get_running_loop().call_later(0.05, time.sleep, 0.6)
        run = await open_loop(send, [0.1 * i for i in range(12)], 30.0)
        return [s.start_s - s.due_s for s in run.finished if s.due_s is not None]

    async def smooth() -> list[float]:
        run = await open_loop(send, [0.02 * i for i in range(12)], 30.0)
        return [s.start_s - s.due_s for s in run.finished if s.due_s is not None]

    assert late_line(asyncio.run(stalled()), 0.25) is not None
    assert min(asyncio.run(smooth())) >= 0.0


def test_the_shipped_trace_reads() -> None:
    trace = read_trace(SHIPPED)
    assert trace.format is TraceFormat.HARNESS and len(trace.requests) == 40
    assert trace.sessions == 4 and sum(bool(r.blocks) for r in trace.requests) == 20


@pytest.mark.real_model
@pytest.mark.slow
def test_mlx_lm_server_replays_the_shipped_trace_on_time(tmp_path: Path) -> None:
    from harness.backends.http import BACKEND
    from harness.core.types import ServerRef
    from harness.models.catalog import find_embedded
    from harness.scenarios.base import ScenarioContext
    from harness.scenarios.trace_replay import SCENARIO, TraceReplayParams

    found = find_embedded("zoo/llama")
    if found is None or not found.prepared:
        pytest.skip("needs zoo/llama prepared")
    model, info = BACKEND.load_server(found.path, ServerRef(engine="mlx_lm"), tmp_path)
    try:
        ctx = ScenarioContext(model, info, 1, 0, lambda: (model, info))
        params = TraceReplayParams(trace=str(SHIPPED), speedup=4.0, max_requests=8)
        out = SCENARIO.run(ctx, params)
    finally:
        model.close()  # type: ignore[attr-defined]
    assert out.failures == ()
    names = {m.name for m in out.metrics}
    assert {"trace_replay.completed", "trace_replay.dispatch_lag_max_s"} <= names
    assert "trace_replay.session_wait_max_s" in names
    completed = next(m for m in out.metrics if m.name == "trace_replay.completed")
    assert completed.samples == (8.0,)
    assert out.artifacts["trace"]["requests"] == 8 and out.artifacts["trace"]["of"] == 40
    # each request asked for its output length and got it (ignore_eos), by the server's usage
    asked = [r.output_tokens for r in read_trace(SHIPPED).requests[:8]]
    sent = out.artifacts["replay"]["requests"]
    got = dict(zip(sent["index"], sent["usage_tokens"], strict=True))
    assert [got[i] for i in range(8)] == asked
