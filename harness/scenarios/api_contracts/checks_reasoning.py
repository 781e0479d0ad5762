"""Contract check on reasoning: where a server splits ``<think>...</think>`` into a reasoning
field (``reasoning_content`` or ``reasoning``), no think markup is left in the content,
streamed or not.

A server that never returns a reasoning field makes no such claim: the check is then not
applicable (saying whether the markup stayed in the content, as such a server sends it).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.backends.openai_client import Reply, StreamReply
from harness.scenarios.api_contracts.asking import ask, ask_stream
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
from harness.toolcalls.formats import THINK

REASONING_PROMPT = "Think step by step, then answer: what is 17 times 3?"
SHARED_KEY = "reasoning"  # the exchange in ``ctx.shared`` once asked (message_content reads it)


@dataclass(frozen=True)
class ReasoningExchange:
    whole: Reply
    whole_exchange: Exchange
    streamed: StreamReply
    stream_exchange: Exchange


def reasoning_exchange(ctx: CheckContext) -> ReasoningExchange:
    """The request that asks for thinking, streamed and not; asked once per run."""

    def make() -> ReasoningExchange:
        payload = {
            "messages": [{"role": "user", "content": REASONING_PROMPT}],
            "max_tokens": ctx.limits.long_max_tokens,
            "temperature": 0.0,
            "chat_template_kwargs": {"enable_thinking": True},
        }
        whole, whole_exchange = ask(ctx, payload)
        streamed, stream_exchange = ask_stream(ctx, payload)
        return ReasoningExchange(whole, whole_exchange, streamed, stream_exchange)

    result: ReasoningExchange = ctx.once(SHARED_KEY, make)
    return result


def check_reasoning(ctx: CheckContext) -> CheckResult:
    name = "reasoning"
    if ctx.api is not Api.CHAT:
        return not_applicable(name, "reasoning needs the chat API (api: chat)")
    asked = reasoning_exchange(ctx)
    whole, streamed = asked.whole, asked.streamed
    evidence = (asked.whole_exchange, asked.stream_exchange)
    modes = (("non-streamed", whole), ("streamed", streamed))
    broken = [
        f"the {mode} request failed: {reply.failure}" for mode, reply in modes if not reply.ok
    ]
    if broken:
        return failed(name, "; ".join(broken), evidence)
    claims = [mode for mode, reply in modes if reply.reasoning]
    leaked = [mode for mode, reply in modes if any(m in reply.content for m in THINK)]
    if not claims:
        reason = (
            "the server returns no reasoning field; think markup stays in the content"
            if leaked
            else "no reasoning: no reasoning field and no think markup in the content"
        )
        return not_applicable(name, reason, evidence)
    if leaked:
        reason = (
            f"the server splits reasoning ({' and '.join(claims)}), yet think markup is in "
            f"the {' and '.join(leaked)} content"
        )
        return failed(name, reason, evidence)
    return passed(name, f"reasoning split from the content ({' and '.join(claims)})", evidence)


CHECKS = (
    ContractCheck(
        "reasoning",
        "where the server splits reasoning, no <think> markup leaks into the content",
        check_reasoning,
    ),
)
