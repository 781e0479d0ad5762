"""The worker's messages: each kind survives its wire form (through JSON text, as the pipe
carries it), and wire data that is not a message is refused with one line naming what is wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.backends.base import LoadInfo
from harness.backends.mlx_runtime import MemorySnapshot
from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.types import AutoRepeats, Metric, ServerRef, Unit
from harness.runner.messages import (
    REPLIES,
    REQUESTS,
    CrashReply,
    ErrorReply,
    ExitRequest,
    LoadedReply,
    LoadRequest,
    MessageError,
    ResultReply,
    RunRequest,
    reply_from_wire,
    request_from_wire,
)
from harness.runner.repeat_progress import RepeatProgress

SERVER = ServerRef(
    engine="mlx_lm", args=("--port", "0"), env=(("A", "1"),), request_model="m", draft_tokens=3
)
REQUEST_CASES = [
    LoadRequest("fake", "/models/m"),
    LoadRequest("llama_server", None, SERVER, "/run/logs"),
    RunRequest("throughput", {"gen_tokens": 5, "nested": {"a": [1, 2]}}, 3, 1),
    RunRequest(
        "throughput",
        {},
        2,
        0,
        timeout_s=60.0,
        cooldown_s=1.5,
        wait_for_quiet_s=10.0,
        auto=AutoRepeats(min_repeats=2, max_repeats=9, rel_ci=0.05, budget_s=30.0),
    ),
    ExitRequest(),
]
CHECK = CheckVerdict("seed", CheckStatus.FAIL, "the seed was ignored")
REPLY_CASES = [
    LoadedReply(LoadInfo(0.5, 1024, "cpu", {"served_file": "x.gguf"}), "openblas (x)", 4242),
    LoadedReply(LoadInfo(0.0, 0, "gpu"), None, 1),
    ResultReply(()),
    ResultReply(
        metrics=(
            Metric("tokens_per_s", Unit.TOKENS_PER_SECOND, (10.0, 11.5), warmup_samples=(9.0,)),
            Metric("ttft_s", Unit.SECONDS, (0.25,), view="first token"),
        ),
        artifacts={"timing": {"load_s": 0.1}, "generated_tokens": [5, 5]},
        memory=MemorySnapshot(100, 50, None, "since case start"),
        elapsed_s=2.5,
        version=3,
        failures=("output differs",),
        skip_reason="not reusable: x",
        timed_out="ran out after 2 of 3",
        checks=(CHECK,),
    ),
    ErrorReply("RuntimeError: boom"),
    ErrorReply("server at http://x did not answer", failed=True),
    ErrorReply("mlx_lm.server here does not take --prefill-step-size 4", skipped=True),
    CrashReply("out of memory: MemoryError"),
    RepeatProgress(2, 5, warmup=False, auto=True, tokens=32),
]


def _through_the_pipe(message: Any) -> object:
    return json.loads(json.dumps(message.to_wire()))


@pytest.mark.parametrize("message", REQUEST_CASES, ids=repr)
def test_each_request_survives_its_wire_form(message: Any) -> None:
    assert request_from_wire(_through_the_pipe(message)) == message


@pytest.mark.parametrize("message", REPLY_CASES, ids=repr)
def test_each_reply_survives_its_wire_form(message: Any) -> None:
    assert reply_from_wire(_through_the_pipe(message)) == message


def test_every_kind_has_a_round_trip_case() -> None:
    """A kind added without a case here fails this test."""
    assert {type(m) for m in REQUEST_CASES} == set(REQUESTS.values())
    assert {type(m) for m in REPLY_CASES} == {*REPLIES.values(), RepeatProgress}


RUN = RunRequest("load", {}, 1, 0).to_wire()
RESULT = ResultReply(()).to_wire()


@pytest.mark.parametrize(
    ("read", "raw", "words"),
    [
        (request_from_wire, ["load"], "a request is a JSON object, not list"),
        (request_from_wire, {"backend": "fake"}, "unknown request 'op' None"),
        (request_from_wire, {"op": "result"}, "unknown request 'op' 'result'"),
        (request_from_wire, {"op": "load", "path": "/m"}, "'load' message has no 'backend'"),
        (request_from_wire, {"op": "load", "backend": 3}, "'backend' is not text: 3"),
        (request_from_wire, {**RUN, "repeats": -1}, "'repeats' is not a count >= 0: -1"),
        (request_from_wire, {**RUN, "warmup": True}, "'warmup' is not a count >= 0: True"),
        (request_from_wire, {**RUN, "params": [1]}, "'params' is not an object"),
        (request_from_wire, {**RUN, "timeout_s": "soon"}, "'timeout_s' is not a number of s"),
        (request_from_wire, {**RUN, "auto": {"least": 2}}, "'auto' does not fit"),
        (
            request_from_wire,
            {"op": "load", "backend": "x", "server": {"engine": "e", "port": 1}},
            "'server' does not fit",
        ),
        (reply_from_wire, "done", "a reply is a JSON object, not str"),
        (reply_from_wire, {"op": "run"}, "unknown reply 'op' 'run'"),
        (reply_from_wire, {"op": "loaded", "info": {}, "pid": 1}, "'info' does not fit"),
        (reply_from_wire, {"op": "error"}, "'error' message has no 'error'"),
        (reply_from_wire, {"op": "error", "error": "x", "status": "ok"}, "'status' is not"),
        (reply_from_wire, {"op": "crash", "error": None}, "'error' is not text: None"),
        (reply_from_wire, {"op": "result"}, "'result' message has no 'metrics'"),
        (reply_from_wire, {**RESULT, "metrics": {}}, "'metrics' is not a list"),
        (reply_from_wire, {**RESULT, "metrics": [{"unit": "s"}]}, "metrics[0] is not a metric"),
        (
            reply_from_wire,
            {**RESULT, "metrics": [{"name": "x", "unit": "furlongs"}]},
            "metrics[0] is not a metric: 'furlongs' is not a valid Unit",
        ),
        (reply_from_wire, {**RESULT, "failures": "one"}, "'failures' is not a list of text"),
        (reply_from_wire, {**RESULT, "version": "2"}, "'version' is not a whole number"),
        (reply_from_wire, {**RESULT, "memory": {"rss_view": "x"}}, "'memory' does not fit"),
        (reply_from_wire, {**RESULT, "checks": [{"name": 1}]}, "'result' message: checks"),
        (reply_from_wire, {"op": "progress", "repeat": 0, "of": 5}, "progress 'repeat'"),
    ],
)
def test_wire_data_that_is_not_a_message_is_refused_with_one_line(
    read: Any, raw: object, words: str
) -> None:
    with pytest.raises(MessageError) as raised:
        read(raw)
    line = str(raised.value)
    assert words in line, line
    assert "\n" not in line
