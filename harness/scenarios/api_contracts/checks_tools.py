"""Contract checks on tool calls: ``finish_reason: tool_calls``, arguments a JSON string,
streamed ``delta.tool_calls`` merged by index equal to the non-streamed calls, and no call
markup left in the content.

One request with tools asks for a call, streamed and not (asked once, judged by all four). It is
few-shot: two earlier turns where the assistant calls a tool (rendered with the template's own
markup), so a small real model calls too. A server that refuses tools (a 4xx: no tool template)
leaves the checks not applicable, with that reason; call markup in the content with no parsed
call is a leak, so ``tool_call_markup`` fails then; a call left in the reasoning (made inside an
open think block: mlx-lm #1160) is a call the server dropped. An answer without a call is judged
against the model's own greedy tokens (:mod:`.own_tokens`): a call there is a call the server
dropped (every check fails); none there is "no tool call made" (not applicable); a server whose
chat template is not known here cannot be checked (not applicable, saying so). An answer with
calls is held to the own tokens too, where the harness can count their calls (a reader for the
template's markup, and every call there parses): fewer calls than they hold, or as many to other
tools, streamed or not, fail every check, naming both counts (a server that returns the first of
two calls). More calls than they hold is not judged: a release may strip call markup from what
``/v1/completions`` returns.
The ``tool_names`` parameter spells the tools' names (``get_weather``, or ``get-weather`` for a
model trained on hyphenated names: :mod:`harness.core.tool_request`); ``tool_call_count: 2``
asks for the weather in two cities, two calls in one turn.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.backends.openai_client import Reply, StreamReply
from harness.core.tool_request import PAIR_PROMPT, TOOL_PROMPT, tool_messages, tools_named
from harness.scenarios.api_contracts.asking import ask, ask_stream, refused, shown_value
from harness.scenarios.api_contracts.own_tokens import (
    Held,
    call_in_text,
    counts_calls,
    own_tokens,
)
from harness.scenarios.api_contracts.verdicts import (
    Api,
    CheckContext,
    CheckResult,
    ContractCheck,
    Exchange,
    failed,
    not_applicable,
    passed,
)
from harness.toolcalls.formats import FORMATS


def call_markup() -> tuple[str, ...]:
    """Text that belongs to some model family's call markup and never to a reply's content."""
    return tuple(sorted({m for f in FORMATS for m in f.markup}))


@dataclass(frozen=True)
class ToolExchange:
    whole: Reply
    whole_exchange: Exchange
    streamed: StreamReply
    stream_exchange: Exchange

    @property
    def evidence(self) -> tuple[Exchange, Exchange]:
        return (self.whole_exchange, self.stream_exchange)

    def modes(self) -> tuple[tuple[str, Reply | StreamReply], ...]:
        return (("non-streamed", self.whole), ("streamed", self.streamed))

    def calls(self) -> tuple[tuple[str, Sequence[Mapping[str, Any]]], ...]:
        return tuple((mode, reply.tool_calls) for mode, reply in self.modes())


def asked_messages(ctx: CheckContext) -> list[dict[str, Any]]:
    """The tool request's messages as the case asks them: its tool names, its question (one
    call, or two in one turn)."""
    question = PAIR_PROMPT if ctx.limits.tool_call_count == 2 else TOOL_PROMPT
    return tool_messages(question, names=ctx.limits.tool_names)


def tool_exchange(ctx: CheckContext) -> ToolExchange:
    def make() -> ToolExchange:
        names = ctx.limits.tool_names
        payload = {
            "messages": asked_messages(ctx),
            "tools": list(tools_named(names)),
            "max_tokens": ctx.limits.long_max_tokens,
            "temperature": 0.0,
        }
        whole, whole_exchange = ask(ctx, payload)
        streamed, stream_exchange = ask_stream(ctx, payload)
        return ToolExchange(whole, whole_exchange, streamed, stream_exchange)

    result: ToolExchange = ctx.once("tools", make)
    return result


def _unjudged(name: str, ctx: CheckContext) -> tuple[ToolExchange | None, CheckResult | None]:
    """The exchange, or the verdict when there are no calls to judge."""
    if ctx.api is not Api.CHAT:
        return None, not_applicable(name, "tool calls need the chat API (api: chat)")
    tools = tool_exchange(ctx)
    for mode, reply in tools.modes():
        if refused(reply):
            reason = f"the server refused a request with tools ({mode}: {reply.failure})"
            return None, not_applicable(name, reason, tools.evidence)
        if not reply.ok:
            reason = f"the {mode} request with tools failed: {reply.failure}"
            return None, failed(name, reason, tools.evidence)
    if not any(calls for _, calls in tools.calls()):
        return None, _no_call(name, ctx, tools)
    short = _calls_differ(ctx, tools)
    if short is not None:
        return None, failed(name, *short)
    return tools, None


def _names(names: Sequence[Any], offered: Sequence[str]) -> str:
    """The call names in one line; a name the request did not offer is not quoted (a server's
    answer is untrusted)."""
    return ", ".join(n if n in offered else "a name not offered" for n in names)


def _short(names: Sequence[Any], expected: Sequence[str]) -> bool:
    """The calls returned fall short of the own tokens': fewer, or as many to other tools or
    in another order. More is not judged: a release may strip a call's markup from what
    ``/v1/completions`` returns (mlx-lm 0.30.5 from its text, 0.31.2 the opening marker from
    its token ids), so the own tokens can hold fewer calls than the model made, never more."""
    return len(names) < len(expected) or (len(names) == len(expected) and names != expected)


def _calls_differ(
    ctx: CheckContext, tools: ToolExchange
) -> tuple[str, tuple[Exchange, ...]] | None:
    """(the reason, the evidence) when the calls returned, streamed or not, fall short of the
    calls the model's own greedy tokens hold (:func:`_short`); None when they do not, or the
    own tokens' calls cannot be counted here. A server that returns the first of two calls
    passes every other rule."""
    if not counts_calls(ctx):
        return None
    offered = [str(tool["function"]["name"]) for tool in tools_named(ctx.limits.tool_names)]
    own = own_tokens(ctx, asked_messages(ctx), tools_named(ctx.limits.tool_names))
    if own.calls is None:
        return None
    expected = [call.name for call in own.calls]
    returned = [(mode, [n for n, _ in _normal(calls)]) for mode, calls in tools.calls()]
    if not any(_short(names, expected) for _, names in returned):
        return None
    server = ", ".join(
        f"{len(names)} {mode} ({_names(names, offered)})" for mode, names in returned
    )
    reason = (
        f"the model's own greedy tokens hold {len(expected)} tool "
        f"call{'' if len(expected) == 1 else 's'} "
        f"({_names(expected, offered)}) and the server returned {server} ({own.read})"
    )
    return reason, (*tools.evidence, *own.evidence)


def _returned(reply: Reply | StreamReply) -> str:
    content = f"content {len(reply.content)} characters" if reply.content else "content empty"
    return f"finish_reason {shown_value(reply.finish_reason)}, {content}"


def _generated_and_dropped(tools: ToolExchange) -> int | None:
    """The tokens the server says it generated when it returned none of them, streamed or
    not (no content, no reasoning, no call) and they were more than an end of turn; else None.
    mlx-lm #1307: a call closed by the end of turn, no end marker, came back as an empty
    message with ``finish_reason: "stop"``, and its ``/v1/completions`` dropped it too, so the
    model's own tokens asked there hold nothing either."""
    if any(reply.content or reply.reasoning or reply.tool_calls for _, reply in tools.modes()):
        return None
    counts = [reply.usage.get("completion_tokens") for _, reply in tools.modes()]
    generated = max(
        (c for c in counts if isinstance(c, int) and not isinstance(c, bool)), default=0
    )
    return generated if generated >= 2 else None


def _no_call(name: str, ctx: CheckContext, tools: ToolExchange) -> CheckResult:
    """No call in either answer: a failure when the model's own tokens hold one, or when the
    server generated tokens and returned none of them."""
    tools_offered = tools_named(ctx.limits.tool_names)
    own = own_tokens(ctx, asked_messages(ctx), tools_offered)
    evidence = (*tools.evidence, *own.evidence)
    returned = "; ".join(f"{mode}: {_returned(reply)}" for mode, reply in tools.modes())
    names = [str(tool["function"]["name"]) for tool in tools_offered]
    in_text = [
        (mode, part, found)
        for mode, reply in tools.modes()
        for part, text in (("content", reply.content), ("reasoning", reply.reasoning))
        if (found := call_in_text(text, names))
    ]
    if in_text:  # the model called; the server left the call, unparsed, in the content or
        # the reasoning (mlx-lm #1160: a call made inside an open think block)
        mode, part, (marker, tool) = in_text[0]
        inside = " (a call made inside the think block)" if part == "reasoning" else ""
        reason = (
            f"the {mode} {part} holds a call ({marker}… naming {tool}){inside} and the server "
            f"returned no tool call ({returned})"
        )
        return failed(name, reason, evidence)
    if own.held is Held.CALL:
        reason = f"{own.line} and the server returned no tool call ({returned})"
        return failed(name, reason, evidence)
    dropped = _generated_and_dropped(tools)
    if dropped is not None:
        reason = (
            f"the server generated {dropped} tokens for the tool request and returned none of "
            f"them: no content, no tool call ({returned}); a dropped call (own tokens: "
            f"{own.line})"
        )
        return failed(name, reason, evidence)
    return not_applicable(name, f"no tool call made: {own.line}", evidence)


def check_tool_finish_reason(ctx: CheckContext) -> CheckResult:
    name = "tool_call_finish_reason"
    tools, verdict = _unjudged(name, ctx)
    if tools is None:
        assert verdict is not None
        return verdict
    wrong = [
        f"{mode}: finish_reason {shown_value(reply.finish_reason)}"
        for mode, reply in tools.modes()
        if reply.tool_calls and reply.finish_reason != "tool_calls"
    ]
    if wrong:
        return failed(name, "after tool calls " + "; ".join(wrong), tools.evidence)
    return passed(name, 'finish_reason "tool_calls" after tool calls', tools.evidence)


def _arguments_problem(call: Mapping[str, Any]) -> str | None:
    function = call.get("function")
    arguments = function.get("arguments") if isinstance(function, Mapping) else None
    if not isinstance(arguments, str):
        return f"arguments are a JSON {type(arguments).__name__}, not a string"
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return "arguments do not parse as JSON"
    return None if isinstance(parsed, dict) else "arguments are not a JSON object"


def check_tool_arguments(ctx: CheckContext) -> CheckResult:
    name = "tool_call_arguments"
    tools, verdict = _unjudged(name, ctx)
    if tools is None:
        assert verdict is not None
        return verdict
    problems = [
        f"{mode} call {i + 1}: {problem}"
        for mode, calls in tools.calls()
        for i, call in enumerate(calls)
        if (problem := _arguments_problem(call)) is not None
    ]
    if problems:
        return failed(name, "; ".join(problems), tools.evidence)
    return passed(name, "every call's arguments are a JSON string of an object", tools.evidence)


def _normal(calls: Sequence[Mapping[str, Any]]) -> list[tuple[Any, Any]]:
    """(name, arguments as JSON values) per call: the same call however it was sent."""
    normal = []
    for call in calls:
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError):
                arguments = json.loads(arguments)
        normal.append((function.get("name"), arguments))
    return normal


def check_tool_stream_merge(ctx: CheckContext) -> CheckResult:
    name = "tool_call_stream_merge"
    tools, verdict = _unjudged(name, ctx)
    if tools is None:
        assert verdict is not None
        return verdict
    whole, merged = _normal(tools.whole.tool_calls), _normal(tools.streamed.tool_calls)
    if len(whole) != len(merged):
        reason = (
            f"streamed deltas merged by index give {len(merged)} calls, non-streamed {len(whole)}"
        )
        return failed(name, reason, tools.evidence)
    differing = [str(i + 1) for i, (a, b) in enumerate(zip(whole, merged, strict=True)) if a != b]
    if differing:
        reason = (
            f"streamed call {', '.join(differing)} differs from the non-streamed one "
            "(name or arguments)"
        )
        return failed(name, reason, tools.evidence)
    return passed(name, f"{len(whole)} streamed calls equal the non-streamed ones", tools.evidence)


def check_tool_markup(ctx: CheckContext) -> CheckResult:
    name = "tool_call_markup"
    if ctx.api is not Api.CHAT:
        return not_applicable(name, "tool calls need the chat API (api: chat)")
    markup = call_markup()
    tools = tool_exchange(ctx)
    leaked = [mode for mode, reply in tools.modes() if any(m in reply.content for m in markup)]
    if leaked:
        reason = f"call markup in the {' and '.join(leaked)} content"
        return failed(name, reason, tools.evidence)
    _, verdict = _unjudged(name, ctx)
    if verdict is not None:
        return verdict
    return passed(name, "no call markup in the content", tools.evidence)


CHECKS = (
    ContractCheck(
        "tool_call_finish_reason",
        'finish_reason "tool_calls" after tool calls, streamed and not',
        check_tool_finish_reason,
    ),
    ContractCheck(
        "tool_call_arguments",
        "tool call arguments are a JSON string of an object",
        check_tool_arguments,
    ),
    ContractCheck(
        "tool_call_stream_merge",
        "streamed delta.tool_calls merged by index equal the non-streamed calls",
        check_tool_stream_merge,
    ),
    ContractCheck(
        "tool_call_markup", "no tool-call markup leaks into the content", check_tool_markup
    ),
)
