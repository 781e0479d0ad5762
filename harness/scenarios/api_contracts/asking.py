"""Requests the contract checks send, and the evidence they keep of each.

Every request is built here (chat or completions, greedy unless a check says otherwise), sent
through :mod:`harness.backends.openai_client`, and kept as an :class:`Exchange`: the body as
JSON and an excerpt of the answer (status, finish reason, usage, text, calls). The greedy
reference answers several checks judge against are asked once per run (``ctx.once``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.backends.openai_client import Reply, StreamReply, excerpt, post, stream
from harness.scenarios.api_contracts.verdicts import Api, CheckContext, Exchange

REQUEST_CHARS = 600
TEXT_CHARS = 300
BASE_PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle."


def prompt(ctx: CheckContext, topic: str) -> str:
    """A prompt of its own for ``topic``, new to the server's cache in each run."""
    return f"{BASE_PROMPT} Theme: {topic}. Run {ctx.nonce}."


def body(ctx: CheckContext, text: str, **extra: Any) -> dict[str, Any]:
    """A greedy request for ``text`` with the checks' ``max_tokens`` (``extra`` overrides)."""
    if ctx.api is Api.CHAT:
        start: dict[str, Any] = {"messages": [{"role": "user", "content": text}]}
    else:
        start = {"prompt": text}
    return {**start, "max_tokens": ctx.limits.max_tokens, "temperature": 0.0, **extra}


def request_text(
    ctx: CheckContext, payload: Mapping[str, Any], *, streamed: bool, api: Api | None = None
) -> str:
    shown = {**ctx.endpoint.body(payload), "stream": streamed}
    text = json.dumps(shown, ensure_ascii=False)
    return excerpt(f"POST {(api or ctx.api).path} {text}", REQUEST_CHARS)


def _usage_text(usage: Mapping[str, Any]) -> str:
    return json.dumps(dict(usage), sort_keys=True) if usage else "none"


def _calls_text(calls: Sequence[Mapping[str, Any]]) -> str:
    return json.dumps(list(calls), ensure_ascii=False, sort_keys=True) if calls else "none"


def chat_message(reply: Reply) -> Mapping[str, Any] | str:
    """``choices[0].message`` of a non-streamed answer's raw JSON, or what is missing (one
    line): openai-python reads a missing ``content`` as None; this keeps the key's absence."""
    body = reply.body
    choices = body.get("choices") if isinstance(body, Mapping) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return "no choices[0] object"
    message = choices[0].get("message")
    return message if isinstance(message, Mapping) else "no choices[0].message object"


def _content_shown(reply: Reply | StreamReply) -> str:
    """The text as JSON; a chat message's null content, or its missing key, as such."""
    message = chat_message(reply) if isinstance(reply, Reply) else None
    if isinstance(message, Mapping) and message.get("content") is None:
        return "null" if "content" in message else "(no content key)"
    return excerpt(json.dumps(reply.content, ensure_ascii=False), TEXT_CHARS)


def describe(reply: Reply | StreamReply) -> str:
    """The answer in a few lines: status (or the error), finish reason, usage, text, calls."""
    head = f"HTTP {reply.status}" if reply.status is not None else "no HTTP answer"
    if reply.location:
        head += f", Location: {reply.location}"
    if isinstance(reply, StreamReply):
        head += f", {len(reply.chunks)} events" + (", [DONE]" if reply.done else ", no [DONE]")
        unreadable = False
    else:
        unreadable = reply.body is None
    lines = [head]
    if reply.error:
        lines.append(f"error: {reply.error}")
    if not reply.ok or unreadable:
        lines.append(f"body: {excerpt(reply.raw, TEXT_CHARS) if reply.raw else '(empty)'}")
        return "\n".join(lines)
    lines.append(f"finish_reason: {reply.finish_reason}")
    lines.append(f"usage: {_usage_text(reply.usage)}")
    if reply.reasoning:
        lines.append(f"reasoning: {excerpt(json.dumps(reply.reasoning), TEXT_CHARS)}")
    lines.append(f"content: {_content_shown(reply)}")
    calls = reply.tool_calls
    if calls:
        lines.append(f"tool_calls: {excerpt(_calls_text(calls), TEXT_CHARS)}")
    return "\n".join(lines)


def ask(
    ctx: CheckContext, payload: Mapping[str, Any], *, api: Api | None = None
) -> tuple[Reply, Exchange]:
    """A non-streamed request to the run's API (``api``: another one)."""
    path = (api or ctx.api).path
    reply = post(ctx.client, ctx.endpoint, path, payload, case_end=ctx.case_end)
    ctx.answers.append(reply)
    return reply, Exchange(request_text(ctx, payload, streamed=False, api=api), describe(reply))


def ask_stream(
    ctx: CheckContext, payload: Mapping[str, Any], *, stop_after_chunks: int | None = None
) -> tuple[StreamReply, Exchange]:
    reply = stream(
        ctx.client,
        ctx.endpoint,
        ctx.api.path,
        payload,
        stop_after_chunks=stop_after_chunks,
        case_end=ctx.case_end,
    )
    ctx.answers.append(reply)
    return reply, Exchange(request_text(ctx, payload, streamed=True), describe(reply))


@dataclass(frozen=True)
class Reference:
    """The greedy answers to the base prompt, non-streamed and streamed."""

    payload: Mapping[str, Any]
    whole: Reply
    whole_exchange: Exchange
    streamed: StreamReply
    stream_exchange: Exchange

    @property
    def error(self) -> str | None:
        """Why the reference cannot serve as one (one line), else None."""
        for kind, reply in (("non-streamed", self.whole), ("streamed", self.streamed)):
            if not reply.ok:
                return f"the greedy {kind} reference request failed: {reply.failure}"
        return None


def reference(ctx: CheckContext) -> Reference:
    def make() -> Reference:
        payload = body(ctx, prompt(ctx, "the sea"))
        whole, whole_exchange = ask(ctx, payload)
        streamed, stream_exchange = ask_stream(ctx, payload)
        return Reference(payload, whole, whole_exchange, streamed, stream_exchange)

    result: Reference = ctx.once("reference", make)
    return result


DEPENDENCE_TOPIC = "a mountain village in winter"


def prompt_independence(ctx: CheckContext) -> str | None:
    """Why texts compared on this server prove nothing (one line), else None: the greedy answers
    to two different prompts (the reference's and another topic's) are the same text, so a
    server that answers one request with another's tokens would still give "the same text".
    Asked once per run. None too when a request failed (the checks report their own failures)."""

    def make() -> str | None:
        from harness.scenarios.prompt_dependence import independence_line

        ref = reference(ctx)
        other, _ = ask(ctx, body(ctx, prompt(ctx, DEPENDENCE_TOPIC)))
        if ref.error is not None or not other.ok or other.content != ref.whole.content:
            return None
        return independence_line(
            f"two different prompts got the same greedy text ({len(other.content)} characters)"
        )

    result: str | None = ctx.once("prompt_independence", make)
    return result


def shown_value(value: object, limit: int = 40) -> str:
    """A value the server sent, for a reason line: its repr (control characters escaped), cut."""
    return excerpt(repr(value), limit)


def refused(reply: Reply | StreamReply) -> bool:
    """The server answered with a 4xx of its own (not a transport failure): it says it does
    not take what was asked (a parameter, tools), so a check on it is not applicable."""
    return reply.status is not None and 400 <= reply.status < 500 and reply.error is None
