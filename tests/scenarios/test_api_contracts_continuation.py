"""``continuation``: a prompt followed by its own answer (an exact prompt-cache hit) is answered,
and with the tail of the prompt's longer answer. Scripted servers plant each answer; the real
mlx_lm.server's failure (mlx-lm#1215) is replayed by ``suites/server.suite.yaml``."""

from __future__ import annotations

from typing import Any

import pytest

from harness.backends.openai_client import Endpoint, sync_client
from harness.scenarios.api_contracts import ApiContractsParams, run_checks
from harness.scenarios.api_contracts.verdicts import Api, CheckContext, Limits, Verdict
from tests.servers.scripted_openai import completion, scripted_server

LIMITS = Limits(max_tokens=8, long_max_tokens=32, timeout_s=10.0, concurrency=2, settle_s=0.0)
ANSWER = "Berlin. The capital of Italy"
TAIL = "is Rome, and that of Spain"


def _server(
    *,
    joined_tokens: int = 20,
    again: tuple[int, Any] | None = None,
    cached: int = 19,
    longer: str = ANSWER + " " + TAIL,
    first_status: int = 200,
) -> Any:
    """The first answer (12 prompt + 8 answer tokens), the continuation's, the longer one's."""

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if first_status != 200:
            return first_status, {"error": {"message": "no route"}}
        text, max_tokens = body["prompt"], body["max_tokens"]
        if text.endswith(ANSWER):  # the prompt followed by its own answer
            if again is not None:
                return again
            out = completion(TAIL, joined_tokens, 8)
            out["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
            return 200, out
        if max_tokens == 16:
            return 200, completion(longer, 12, 16)
        return 200, completion(ANSWER, 12, 8)

    return answer


CASES = [
    # (what the server does, verdict, start of the reason)
    ("good", {}, Verdict.PASS, "the continuation (20 prompt tokens) was answered"),
    (
        "generation thread died",
        {"again": (404, {"error": "generation thread died"})},
        Verdict.FAIL,
        "the prompt followed by its own answer (20 tokens, the cache entry",
    ),
    (
        "empty answer",
        {"again": (200, completion("", 20, 0))},
        Verdict.FAIL,
        "the prompt followed by its own answer got an empty answer",
    ),
    (
        "cached KV that is not the prompt's",
        {"longer": ANSWER + " and then something else"},
        Verdict.FAIL,
        "the continuation was served from the cache (19 of 20 prompt tokens) but its answer",
    ),
    (
        "other tokens, not from the cache",
        {"longer": ANSWER + " and then something else", "cached": 12},
        Verdict.NOT_APPLICABLE,
        "the continuation's tokens are not the answer's (the server reused 12 of 20",
    ),
    (
        "text that does not tokenize back",
        {"joined_tokens": 21},
        Verdict.NOT_APPLICABLE,
        "the answer's text does not tokenize back to its tokens (the server counted 21 and 21",
    ),
    (
        "a prompt-blind model",
        {"again": (200, completion(ANSWER, 20, 8))},
        Verdict.UNJUDGED,
        "not judged: the model's answer does not depend on the prompt: the prompt and the",
    ),
    (
        "no /v1/completions",
        {"first_status": 404},
        Verdict.NOT_APPLICABLE,
        "the server has no /v1/completions (HTTP 404)",
    ),
]


@pytest.mark.parametrize(("what", "plant", "verdict", "reason"), CASES, ids=[c[0] for c in CASES])
def test_continuation(what: str, plant: dict[str, Any], verdict: Verdict, reason: str) -> None:
    with scripted_server(_server(**plant)) as url, sync_client(10.0) as client:
        ctx = CheckContext(client, Endpoint(url), Api.CHAT, LIMITS, what)
        (result,) = run_checks(ctx, ["continuation"])
    assert result.verdict is verdict, result.reason
    assert result.reason.startswith(reason), result.reason


def test_continuation_runs_only_when_named() -> None:
    """A server may not survive it: the default checks leave it out, a suite names it."""
    assert "continuation" not in ApiContractsParams().checks
    assert ApiContractsParams(checks=["continuation"]).checks == ["continuation"]
