"""``message_content`` judged on answers made here (no server): a non-streamed chat message
carries ``content``, a string or null, also with no text (mlx-lm#1738, 0.31.2-0.31.3: a tool
call's message had no content key). The check over HTTP, on the planted server, is in
test_api_contracts.py."""

from __future__ import annotations

from typing import Any

import pytest

from harness.backends.openai_client import Endpoint, Reply, StreamReply
from harness.scenarios.api_contracts import run_checks
from harness.scenarios.api_contracts.checks_reasoning import ReasoningExchange
from harness.scenarios.api_contracts.checks_tools import ToolExchange
from harness.scenarios.api_contracts.verdicts import (
    Api,
    CheckContext,
    CheckResult,
    Exchange,
    Limits,
    Verdict,
)

LIMITS = Limits(max_tokens=24, long_max_tokens=48, timeout_s=5.0, concurrency=2, settle_s=0.0)
CALL = {
    "id": "call-1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}
EXCHANGE = Exchange("POST /v1/chat/completions {}", "HTTP 200")
STREAMED = StreamReply(200, (), 0.1, True)
MISSING = object()  # the message has no content key


def _whole(content: Any = MISSING, *, status: int = 200, **message: Any) -> Reply:
    if content is not MISSING:
        message = {"content": content, **message}
    body = {"choices": [{"index": 0, "message": {"role": "assistant", **message}}]}
    if status >= 400:
        body = {"error": {"message": "no tools here"}}
    return Reply(status, body, "{}", 0.1, path="POST /v1/chat/completions")


def _judge(tools: Reply, reasoning: Reply | None = None, api: Api = Api.CHAT) -> CheckResult:
    """The check on these answers, shared as the tool (and reasoning) checks leave them: it
    asks nothing (the endpoint is closed)."""
    ctx = CheckContext(None, Endpoint("http://127.0.0.1:9"), api, LIMITS, "x")  # type: ignore[arg-type]
    ctx.shared["tools"] = ToolExchange(tools, EXCHANGE, STREAMED, EXCHANGE)
    if reasoning is not None:
        ctx.shared["reasoning"] = ReasoningExchange(reasoning, EXCHANGE, STREAMED, EXCHANGE)
    (result,) = run_checks(ctx, ["message_content"])
    return result


@pytest.mark.parametrize(
    ("tools", "reasoning", "verdict", "reason"),
    [
        # 0.32.0: null with no text
        (
            _whole(None, tool_calls=[CALL]),
            None,
            Verdict.PASS,
            "(no text: tool request: content null)",
        ),
        # 0.30.4-0.31.1: the text, empty
        (_whole("", tool_calls=[CALL]), None, Verdict.PASS, 'tool request: content ""'),
        # 0.31.2-0.31.3 (#1738): no content key on a call
        (
            _whole(tool_calls=[CALL]),
            None,
            Verdict.FAIL,
            "the tool request's non-streamed message has no content key (its keys: role, "
            "tool_calls) (a chat.completion message carries content",
        ),
        # #1738's own case: a reasoning cut inside <think>, only the reasoning sent
        (
            _whole("It is sunny."),
            _whole(reasoning="Let me think about 17 times 3"),
            Verdict.FAIL,
            "the reasoning request's non-streamed message has no content key (its keys: role, "
            "reasoning)",
        ),
        (
            _whole("It is sunny."),
            _whole(None, reasoning="Let me think"),
            Verdict.PASS,
            "(no text: reasoning request: content null)",
        ),
        # a key the server made up is quoted (its text is untrusted)
        (
            _whole(tool_calls=[CALL], extra=1),
            None,
            Verdict.FAIL,
            "(its keys: role, tool_calls, 'extra')",
        ),
        (
            _whole([{"type": "text", "text": ""}], tool_calls=[CALL]),
            None,
            Verdict.FAIL,
            "message has content is a JSON array, not a string or null",
        ),
        (
            Reply(200, {"choices": []}, "{}", 0.1),
            None,
            Verdict.FAIL,
            "the tool request's non-streamed answer has no choices[0] object",
        ),
        # every answer had text: the contract's case never came up
        (
            _whole("It is sunny."),
            _whole("51"),
            Verdict.NOT_APPLICABLE,
            "no non-streamed answer without text to judge on: 2 answers with text",
        ),
        (
            _whole(status=400),
            None,
            Verdict.NOT_APPLICABLE,
            "no non-streamed answer without text to judge on: the server refused the tool "
            "request (HTTP 400",
        ),
        (
            _whole(status=500),
            None,
            Verdict.FAIL,
            "the non-streamed tool request failed: HTTP 500",
        ),
    ],
    ids=[
        "null",
        "empty-string",
        "missing-on-call",
        "missing-on-reasoning",
        "null-on-reasoning",
        "unknown-key-quoted",
        "content-array",
        "no-choice",
        "all-had-text",
        "tools-refused",
        "tools-failed",
    ],
)
def test_message_content_verdicts(
    tools: Reply, reasoning: Reply | None, verdict: Verdict, reason: str
) -> None:
    result = _judge(tools, reasoning)
    assert result.verdict is verdict, result.reason
    assert reason in result.reason, result.reason
    assert "\n" not in result.reason
    assert len(result.evidence) == (1 if reasoning is None else 2)


def test_message_content_needs_the_chat_api() -> None:
    result = _judge(_whole(tool_calls=[CALL]), api=Api.COMPLETIONS)
    assert result.verdict is Verdict.NOT_APPLICABLE
    assert result.reason == "the chat message needs the chat API (api: chat)"


@pytest.mark.parametrize(
    ("reply", "shown"),
    [
        (_whole(tool_calls=[CALL]), "content: (no content key)"),
        (_whole(None, tool_calls=[CALL]), "content: null"),
        (_whole("", tool_calls=[CALL]), 'content: ""'),
        (_whole("It is sunny."), 'content: "It is sunny."'),
    ],
    ids=["missing", "null", "empty-string", "text"],
)
def test_the_evidence_keeps_a_missing_content_key_apart_from_null(reply: Reply, shown: str) -> None:
    from harness.scenarios.api_contracts.asking import describe

    assert shown in describe(reply).splitlines()
