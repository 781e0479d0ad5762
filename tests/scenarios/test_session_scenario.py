"""``session``: the reuse accounting and the session files (pure, table-driven), then the
scenario on real zoo models in process (every turn reuses the previous one and answers the same
with and without the cache; Qwen3's template drops ``<think>`` and the turn is named), planted
breaks (a cache whose trim does nothing; a server that reports no reuse), and the HTTP plumbing
against our planted OpenAI server."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.backends.base import LoadInfo
from harness.backends.http import ServedModel
from harness.backends.mlx_lm import BACKEND, MlxLmModel
from harness.backends.openai_client import Endpoint
from harness.models.cache_dir import models_dir
from harness.scenarios.base import ScenarioContext, ScenarioOutput
from harness.scenarios.prefix import common_prefix, reusable_tokens
from harness.scenarios.session import SCENARIO, SessionParams
from harness.scenarios.session.reuse import Departure, TurnReuse, history_departure
from harness.scenarios.session.script import (
    SessionFileError,
    generated_session,
    sessions_from_file,
    template_messages,
)
from harness.scenarios.session.served import no_cache_fields, twin_args
from tests.servers.planted_openai import make_server
from tests.servers.planted_requests import Plant
from tests.servers.toy_model import MODEL_ID

# (id, held, prompt, common, reusable)
PREFIXES = [
    ("empty_cache", [], [1, 2, 3], 0, 0),
    ("grows", [1, 2, 3], [1, 2, 3, 4, 5], 3, 3),
    ("same_prompt_keeps_one_to_process", [1, 2, 3], [1, 2, 3], 3, 2),
    ("answer_replaced", [1, 2, 3, 9, 9], [1, 2, 3, 4, 5, 6], 3, 3),
    ("parts_early", [1, 7, 3], [1, 2, 3], 1, 1),
]


@pytest.mark.parametrize(
    ("held", "prompt", "common", "reusable"),
    [r[1:] for r in PREFIXES],
    ids=[r[0] for r in PREFIXES],
)
def test_reusable_tokens(held: list[int], prompt: list[int], common: int, reusable: int) -> None:
    assert common_prefix(held, prompt) == common
    assert reusable_tokens(held, prompt) == reusable


@pytest.mark.parametrize(
    ("previous", "prompt", "expected"),
    [
        ([1, 2], [1, 2, 3], None),
        ([1, 2, 3], [1, 2, 3], None),
        ([1, 5, 3], [1, 2, 3, 4], Departure(1, 5, 2)),
        ([1, 2, 3], [1, 2], Departure(2, 3, None)),
    ],
    ids=["kept", "same", "rewritten", "shorter"],
)
def test_history_departure(
    previous: list[int], prompt: list[int], expected: Departure | None
) -> None:
    assert history_departure(previous, prompt) == expected


# (id, reuse, slack, missed, reuse share, cached share)
REUSES = [
    ("all_reused", TurnReuse(100, 80, 80), 0, False, 1.0, 0.8),
    ("within_slack", TurnReuse(100, 80, 70), 16, False, 70 / 80, 0.7),
    ("missed", TurnReuse(100, 80, 0), 16, True, 0.0, 0.0),
    ("unknown", TurnReuse(100, 80, None), 0, False, None, None),
    ("first_turn", TurnReuse(100, 0, 0), 0, False, None, 0.0),
    ("reused_more_than_reusable", TurnReuse(100, 80, 90), 0, False, 1.0, 0.9),
]


@pytest.mark.parametrize(
    ("reuse", "slack", "missed", "share", "cached"),
    [r[1:] for r in REUSES],
    ids=[r[0] for r in REUSES],
)
def test_turn_reuse(
    reuse: TurnReuse, slack: int, missed: bool, share: float | None, cached: float | None
) -> None:
    assert reuse.missed(slack) is missed
    assert reuse.reuse_share == share
    assert reuse.cached_share == cached


def test_a_generated_session_is_an_agent_loop_growing_to_its_context() -> None:
    session = generated_session(6, 2048, think=True, count_tokens=lambda t: len(t.split()))
    assert len(session.request_points) == 6
    assert [session.turn_kind(t) for t in range(6)] == ["user", "tool", "tool"] * 2
    roles = [m["role"] for m in session.prompt(5)]
    assert roles[:4] == ["system", "user", "assistant", "tool"]
    calls = [m for m in session.messages if m.get("tool_calls")]
    assert calls and all(
        isinstance(c["tool_calls"][0]["function"]["arguments"], str) for c in calls
    )
    assert all(
        str(m.get("content", "")).startswith("<think>")
        for m in session.messages
        if m["role"] == "assistant"
    )
    words = sum(len(str(m.get("content", "")).split()) for m in session.messages)
    assert 1500 < words < 2600  # the tool results carry the growth to about 2048
    shown = template_messages(session.prompt(5))
    assert isinstance(shown[2]["tool_calls"][0]["function"]["arguments"], dict)
    marked = session.with_nonce("ab12")
    assert str(marked.messages[0]["content"]).startswith("[ab12] ")
    assert marked.messages[1:] == session.messages[1:]


def test_recorded_sessions_make_a_request_before_each_assistant_message(tmp_path: Path) -> None:
    file = tmp_path / "s.jsonl"
    lines = [
        {
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "yo"},
                {"role": "user", "content": "more"},
            ]
        },
        {
            "messages": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "a"},
            ],
            "tools": [],
        },
    ]
    file.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    first, second = sessions_from_file(file)
    assert first.request_points == (1, 3)
    assert second.request_points == (2,)
    assert first.source == "s.jsonl:1"


# (id, file text, what the one line says)
BAD_FILES = [
    ("not_json", "{oops\n", "s.jsonl:1: not JSON"),
    ("no_messages", '{"turns": []}\n', 's.jsonl:1: no "messages" list'),
    ("bad_role", '{"messages": [{"role": "robot"}]}\n', "s.jsonl:1: message 1 has role 'robot'"),
    (
        "tools_not_a_list",
        '{"messages": [{"role": "user", "content": "q"}], "tools": {}}\n',
        's.jsonl:1: "tools" is not a list',
    ),
    ("empty", "\n\n", "s.jsonl: no sessions"),
    (
        "second_line",
        '{"messages": [{"role": "user", "content": "q"}]}\n[]\n',
        's.jsonl:2: no "messages" list',
    ),
    ("assistant_only", '{"messages": [{"role": "assistant", "content": "a"}]}\n', "no request"),
]


@pytest.mark.parametrize(
    ("text", "says"), [r[1:] for r in BAD_FILES], ids=[r[0] for r in BAD_FILES]
)
def test_a_bad_sessions_file_gets_one_line_naming_the_line(
    tmp_path: Path, text: str, says: str
) -> None:
    file = tmp_path / "s.jsonl"
    file.write_text(text)
    with pytest.raises(SessionFileError) as caught:
        sessions_from_file(file)
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_missing_sessions_file_fails_the_case_with_one_line(tmp_path: Path) -> None:
    out = _run(FakeServed(), sessions_file=str(tmp_path / "nope.jsonl"))
    assert len(out.failures) == 1
    assert "cannot read the sessions file" in out.failures[0]


# -- in process, real zoo models ----------------------------------------------------------


def _ctx(model: object, repeats: int = 1, warmup: int = 0) -> Any:
    info = LoadInfo(0.0, 0, "cpu")
    return ScenarioContext(model, info, repeats, warmup, lambda: (model, info), "mlx_lm")


def _run(model: object, repeats: int = 1, **params: Any) -> ScenarioOutput:
    values = {"turns": 4, "context_tokens": 512, "max_tokens": 4, **params}
    return SCENARIO.run(_ctx(model, repeats), SessionParams.model_validate(values))


def _turns(out: ScenarioOutput) -> list[dict[str, Any]]:
    turns: list[list[dict[str, Any]]] = out.artifacts["turns"]  # type: ignore[assignment]
    return turns[0]


@pytest.fixture(scope="module")
def llama(tiny_llama: Path) -> MlxLmModel:
    model, _ = BACKEND.load(tiny_llama)
    assert isinstance(model, MlxLmModel)
    return model


def test_every_turn_reuses_the_previous_one_and_answers_the_same(llama: MlxLmModel) -> None:
    out = _run(llama, repeats=2)
    assert out.failures == () and out.skip_reason is None
    turns = _turns(out)
    assert [t["turn"] for t in turns] == [1, 2, 3, 4]
    assert turns[0]["reusable_tokens"] == 0
    for before, turn in itertools.pairwise(turns):
        assert turn["reused_tokens"] == turn["reusable_tokens"] == before["prompt_tokens"]
        assert turn["new_tokens"] == turn["prompt_tokens"] - before["prompt_tokens"]
    assert all(t["identical"] is True for t in turns)
    samples = {m.name: m.samples for m in out.metrics}
    assert samples["session.reuse_share"] == (1.0,) * 6  # 3 later turns x 2 replays
    assert len(samples["session.ttft_s"]) == len(samples["session.cold_ttft_s"]) == 6


def test_the_case_time_running_out_keeps_the_whole_replays(llama: MlxLmModel) -> None:
    """The clock the scenario reads (``time_left_s``) is scripted: the time runs out once two
    replays are done, so no load on the machine moves where it runs out (a real 1-second
    budget kept no whole replay on a loaded runner)."""
    import dataclasses

    done: list[int | None] = []

    class RunsOutAfterTwoReplays(ScenarioContext):
        def time_left_s(self) -> float | None:
            return 600.0 if len(done) < 2 else 0.0

    base = _ctx(llama, repeats=200)
    fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
    ctx = RunsOutAfterTwoReplays(**{**fields, "run_done": done.append})
    params = SessionParams.model_validate({"turns": 4, "context_tokens": 512, "max_tokens": 4})
    out = SCENARIO.run(ctx, params)
    assert out.timed_out is not None
    assert out.timed_out.startswith("the case's time limit (timeout_s) ran out in replay 3 of 200")
    kept = len(out.artifacts["turns"][0][0]["ttft_s"])  # type: ignore[index]
    assert kept == 2
    samples = {m.name: m.samples for m in out.metrics}
    assert len(samples["session.ttft_s"]) == 3 * kept  # the later turns of the whole replays


class NoTrim(MlxLmModel):
    """A planted cache bug: trimming does nothing, so the next turn runs on stale tokens."""

    def trim(self, cache: Any, n: int) -> int:
        return n


def test_a_cache_whose_trim_does_nothing_fails_the_case(llama: MlxLmModel) -> None:
    broken = NoTrim(llama.model, llama.tokenizer, llama.path)
    out = _run(broken)
    fault = [f for f in out.failures if f.startswith("cache fault at turn 2 (replay 1): ")]
    assert fault, out.failures
    assert "trimmed to" in fault[0] and "the cache holds" in fault[0]


class NeverTrimmable(MlxLmModel):
    """A planted cache that cannot be rewound (as recurrent state cannot): every later turn
    starts from an empty cache."""

    def untrimmable(self, cache: Any) -> str | None:
        return "planted: cannot be trimmed"


def test_a_cache_that_cannot_be_trimmed_misses_every_later_turn(llama: MlxLmModel) -> None:
    out = _run(NeverTrimmable(llama.model, llama.tokenizer, llama.path))
    assert len(out.failures) == 1
    line = out.failures[0]
    assert line.startswith("cache miss in 3 of 4 turns: first turn 2 (tool, replay 1) could reuse ")
    assert "and reused 0 (planted: cannot be trimmed; parted at token " in line
    assert "the cache holds " in line and "the prompt has " in line
    turns = _turns(out)
    assert [t["reused_tokens"] for t in turns] == [0, 0, 0, 0]
    assert all(t["identical"] is True for t in turns)  # a cold start answers the same


def test_qwen3_drops_think_from_earlier_turns_and_the_turn_is_named() -> None:
    folder = models_dir() / "zoo" / "qwen3"
    if not (folder / "config.json").is_file():
        pytest.skip("zoo/qwen3 is not prepared (mlx-harness models prepare)")
    model, _ = BACKEND.load(folder)
    out = _run(model, turns=5, think=True)
    assert out.failures == ()
    rewritten = [t for t in _turns(out) if t["history_rewritten_at"]]
    assert [t["turn"] for t in rewritten] == [4]  # the user's turn after a tool loop
    assert '"<think>"' in rewritten[0]["history_rewritten_at"]
    strict = _run(model, turns=5, think=True, require_stable_history=True)
    assert len(strict.failures) == 1
    assert strict.failures[0].startswith("the template rewrote the history in 1 of 5 turns")


# -- over HTTP: the plumbing, against our planted OpenAI server ----------------------------


class FakeServed(ServedModel):
    def __init__(self, url: str = "http://127.0.0.1:9", engine: str = "planted") -> None:
        super().__init__(Endpoint(url, model=MODEL_ID), engine, None)


@pytest.fixture()
def planted(request: pytest.FixtureRequest) -> Iterator[str]:
    server = make_server(plant=request.param, token_delay_s=0.0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("planted", [None], indirect=True)
def test_a_server_that_reuses_each_turn_passes(planted: str) -> None:
    out = _run(FakeServed(planted))
    assert out.failures == (), out.failures
    turns = _turns(out)
    assert all(t["reused_tokens"] >= t["reusable_tokens"] - 16 for t in turns[1:])
    assert all(t["identical"] is None for t in turns)  # a url: server has no twin: not checked
    assert str(out.artifacts["reference"]).startswith("not checked: the load recorded no ")


# (engine as served, the load's server_engine, request fields, twin arguments)
REFERENCES = [
    ("llama-server version: 1 (abc)", "llama_server", {"cache_prompt": False}, None),
    ("mlx_lm.server 0.32.2", "mlx_lm", None, ["--prompt-cache-size", "0"]),
    ("mlx_vlm.server 0.7.10", "mlx_vlm", None, []),  # its cache needs APC_ENABLED; twins have none
    ("mlx_audio.server", "mlx_audio", None, None),
]


@pytest.mark.parametrize(("engine", "server_engine", "fields", "twin"), REFERENCES)
def test_each_engine_answers_without_its_cache_its_own_way(
    engine: str, server_engine: str, fields: object, twin: object
) -> None:
    assert no_cache_fields(engine) == fields
    assert twin_args(server_engine) == twin


@pytest.mark.parametrize("planted", [Plant.NO_CACHED_TOKENS], indirect=True)
def test_a_server_that_reuses_nothing_is_a_named_miss(planted: str) -> None:
    out = _run(FakeServed(planted))
    assert len(out.failures) == 1
    assert out.failures[0].startswith("cache miss in 3 of 4 turns: first turn 2 (tool, replay 1)")
    assert not _run(FakeServed(planted), require_reuse=False).failures


def test_a_server_that_does_not_answer_fails_naming_the_turn() -> None:
    out = _run(FakeServed("http://127.0.0.1:9"))
    assert len(out.failures) == 1
    assert out.failures[0].startswith("turn 1: ")


def _turn(turn: int, answer: str, identical: bool | None = True) -> Any:
    from harness.scenarios.session.reuse import TurnResult

    return TurnResult(turn, "user", TurnReuse(40, 30, 30), 0.1, 50.0, answer, identical=identical)


@pytest.mark.parametrize(
    ("answers", "identical", "blind"),
    [
        (("a b c", "a b c", "a b c"), True, True),  # every prompt answered alike: proves nothing
        (("a b c", "d e f", "a b c"), True, False),
        (("a b c", "a b c"), None, False),  # not checked: nothing to judge
        (("a b c",), True, False),  # one turn: no two prompts to tell apart
    ],
)
def test_identical_answers_are_not_judged_on_a_prompt_blind_model(
    answers: tuple[str, ...], identical: bool | None, blind: bool
) -> None:
    from harness.scenarios.session import _failures

    turns = [_turn(i + 1, a, identical) for i, a in enumerate(answers)]
    lines = _failures([[turns]], SessionParams())
    expected = (
        [
            "not judged: the model's answer does not depend on the prompt: the 3 turns checked "
            "(each a different prompt) got the same greedy answer (5 characters), so the answer "
            "with the cache matching the one without proves nothing; use a model whose answer "
            "depends on its prompt (the zoo's text families, or a real model)"
        ]
        if blind
        else []
    )
    assert lines == expected
