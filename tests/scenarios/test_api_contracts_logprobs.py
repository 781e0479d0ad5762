"""``logprobs``: one whole entry per generated token, alone and when other requests join a
stream in a batch. The hostile server plants mlx-lm's two batched-logprobs bugs (blank entries
once a plain request joins, #1072; no answer at all once a logprobs request came, #800); a
scripted server plants the rest. The real releases: ``bug_logprobs_batch`` in
``suites/regressions.suite.yaml``."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import pytest

from harness.backends.openai_client import Endpoint, sync_client
from harness.scenarios.api_contracts.catalog import CHECKS, DEFAULT_CHECKS
from harness.scenarios.api_contracts.checks_logprobs import TOP
from harness.scenarios.api_contracts.verdicts import Api, CheckContext, CheckResult, Limits, Verdict
from tests.servers.hostile_openai import HostileServer, Mode, hostile_server
from tests.servers.scripted_openai import completion, scripted_server, stream_chunks

LIMITS = Limits(max_tokens=8, long_max_tokens=16, timeout_s=1.0, concurrency=2, settle_s=0.0)


def _run(url: str, api: Api = Api.CHAT) -> CheckResult:
    with sync_client(LIMITS.timeout_s) as client:
        ctx = CheckContext(client, Endpoint(url), api, LIMITS, "lp")
        return CHECKS["logprobs"].run(ctx)


# mode -> (verdict, reason pattern)
MODES: list[tuple[Mode, Verdict, str]] = [
    (Mode.WELL, Verdict.PASS, r"^\d+ whole entries \(3 top_logprobs each\) for \d+ tokens, their "),
    (
        Mode.LOGPROBS_BLANKED,
        Verdict.FAIL,
        r"^joining a plain stream at its first event: the joiner asking 3: (\d+) of \1 entries "
        r"not whole: entry 1: \{\} \(no token, logprob nor top_logprobs\).*; the joiner asking 5",
    ),
    (
        Mode.LOGPROBS_HANG,
        Verdict.FAIL,
        r"^the request with logprobs failed: no complete answer within 1 s \(the request's limit\)",
    ),
]


@pytest.fixture(scope="module")
def hostile() -> Iterator[HostileServer]:
    with hostile_server() as server:
        yield server


@pytest.mark.parametrize(("mode", "verdict", "reason"), MODES, ids=[m.value for m, *_ in MODES])
def test_the_check_tells_each_planted_bug(
    hostile: HostileServer, mode: Mode, verdict: Verdict, reason: str
) -> None:
    result = _run(hostile.mode_url(mode))
    assert result.verdict is verdict, result.reason
    assert re.search(reason, result.reason), result.reason
    assert "\n" not in result.reason


def _answer(logprobs: Any, status: int = 200) -> Any:
    """What the scripted server answers: a refusal, or "Hi there" (2 tokens) with ``logprobs``
    when asked; a stream when one is asked."""

    def answer(body: Any) -> tuple[int, Any]:
        if status != 200:
            return status, {"error": {"message": "logprobs are not supported"}}
        if body.get("stream"):
            return 200, stream_chunks(
                ["Hi", " there"], {"prompt_tokens": 9, "completion_tokens": 2}
            )
        out = completion("Hi there", 9, 2)
        if body.get("logprobs"):
            out["choices"][0]["logprobs"] = (
                logprobs(body["top_logprobs"]) if callable(logprobs) else logprobs
            )
        return 200, out

    return answer


def _entry(token: str = "Hi", logprob: Any = -0.1, top: int = TOP) -> dict[str, Any]:
    alternatives = [{"token": f"t{k}", "logprob": -1.0 - k} for k in range(top)]
    return {"token": token, "logprob": logprob, "top_logprobs": alternatives}


def _whole(top: int) -> Any:
    return {"content": [_entry("Hi", top=top), _entry(" there", top=top)]}


# a scripted answer -> (verdict, reason pattern)
ANSWERS: list[tuple[str, Any, Verdict, str]] = [
    ("refused", _answer(None, status=400), Verdict.NOT_APPLICABLE, r"^unsupported \(rejected"),
    ("ignored", _answer(None), Verdict.FAIL, r"^the request alone: no logprobs in the answer$"),
    (
        "completions shape",
        _answer({"tokens": [1, 2], "token_logprobs": [-0.1, -0.2]}),
        Verdict.FAIL,
        r"logprobs has no content list \(keys: token_logprobs, tokens\)",
    ),
    (
        "an entry short",
        _answer({"content": [_entry()]}),
        Verdict.FAIL,
        r"^the request alone: 1 logprobs entries for 2 tokens$",
    ),
    (
        "a positive logprob",
        _answer({"content": [_entry(), _entry(logprob=0.5)]}),
        Verdict.FAIL,
        r"entry 2: logprob 0\.5 is not a finite number <= 0",
    ),
    (
        "a NaN logprob",
        _answer({"content": [_entry(logprob=math.nan), _entry()]}),
        Verdict.FAIL,
        r"entry 1: logprob nan is not a finite number <= 0",
    ),
    (
        "a string logprob",
        _answer({"content": [_entry(logprob="-0.1"), _entry()]}),
        Verdict.FAIL,
        r"entry 1: logprob '-0\.1' is no number",
    ),
    (
        "too few alternatives",
        _answer({"content": [_entry(), _entry(top=2)]}),
        Verdict.FAIL,
        r"entry 2: 2 top_logprobs, asked 3",
    ),
    ("whole", _answer(_whole), Verdict.PASS, r"their tokens spell the text"),
]


@pytest.fixture(scope="module")
def scripted() -> Iterator[str]:
    """One server for every scripted answer: ``/s/<i>/v1/...`` answers as ``ANSWERS[i]``."""

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        index = int(path.split("/")[2])
        result: tuple[int, Any] = ANSWERS[index][1](body)
        return result

    with scripted_server(answer) as url:
        yield url


@pytest.mark.parametrize(
    ("index", "verdict", "reason"),
    [(i, verdict, reason) for i, (_, _, verdict, reason) in enumerate(ANSWERS)],
    ids=[label for label, *_ in ANSWERS],
)
def test_entries_are_judged_whole(scripted: str, index: int, verdict: Verdict, reason: str) -> None:
    result = _run(f"{scripted}/s/{index}")
    assert result.verdict is verdict, result.reason
    assert re.search(reason, result.reason), result.reason


def test_named_only_and_chat_only() -> None:
    """Not a default check (mlx-lm 0.30.4 does not survive it); the completions API's logprobs
    are another shape (a count, not a flag): not applicable there."""
    assert "logprobs" not in DEFAULT_CHECKS
    result = _run("http://127.0.0.1:9", Api.COMPLETIONS)
    assert result.verdict is Verdict.NOT_APPLICABLE
