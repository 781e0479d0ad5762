"""Contract checks on generated text: stop strings, finish reasons, streamed = non-streamed,
``max_tokens``.

Stop strings are taken from the greedy streamed reference itself (one chunk's text, and the
text of two neighbouring chunks, so the second spans a chunk boundary), so they are real
pieces of what the model says and line up with its tokens on any server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.backends.openai_client import Reply, StreamReply
from harness.scenarios.api_contracts.asking import (
    Reference,
    ask,
    ask_stream,
    reference,
    shown_value,
)
from harness.scenarios.api_contracts.verdicts import (
    CheckContext,
    CheckResult,
    ContractCheck,
    Exchange,
    failed,
    not_applicable,
    passed,
)
from harness.scenarios.parting import differ_at


@dataclass(frozen=True)
class Stops:
    single: str  # the text of one chunk
    split: str  # the text of two neighbouring chunks: spans a chunk boundary


def choose_stops(streamed: StreamReply) -> Stops | None:
    """Stop strings from the middle of a streamed answer (each at its first occurrence), or
    None when the answer is too short to hold both."""
    texts = [c.text for c in streamed.chunks if c.text]
    full = "".join(texts)
    offsets = [sum(len(t) for t in texts[:i]) for i in range(len(texts))]
    middle = len(texts) // 2
    order = sorted(range(1, len(texts) - 2), key=lambda j: (abs(j - middle), j))
    single = next(
        (texts[j] for j in order if texts[j].strip() and full.find(texts[j]) == offsets[j]), None
    )
    split = next(
        (
            texts[j] + texts[j + 1]
            for j in order
            if texts[j].strip()
            and texts[j + 1].strip()
            and full.find(texts[j] + texts[j + 1]) == offsets[j]
        ),
        None,
    )
    return Stops(single, split) if single is not None and split is not None else None


def _stops(ctx: CheckContext) -> tuple[Reference, Stops | None]:
    ref = reference(ctx)
    return ref, (choose_stops(ref.streamed) if ref.error is None else None)


def stopped(
    ctx: CheckContext, stop: str, *, streamed: bool
) -> tuple[Reply | StreamReply, Exchange]:
    """The reference request with ``stop`` (asked once per run and mode)."""
    ref = reference(ctx)
    payload = {**ref.payload, "stop": [stop]}

    def make() -> tuple[Reply | StreamReply, Exchange]:
        return ask_stream(ctx, payload) if streamed else ask(ctx, payload)

    result: tuple[Reply | StreamReply, Exchange] = ctx.once(f"stop:{streamed}:{stop}", make)
    return result


def _stop_problem(reply: Reply | StreamReply, reference_text: str, stop: str) -> str | None:
    if not reply.ok:
        return f"the request failed: {reply.failure}"
    if stop in reply.content:
        return "the stop string is in the text"
    at = reference_text.find(stop)
    if at >= 0 and reply.content.rstrip() != reference_text[:at].rstrip():
        where = differ_at(reply.content, reference_text[:at])
        return f"the text and the reference cut before the stop {where}"
    return None


def check_stop_string(ctx: CheckContext) -> CheckResult:
    name = "stop_string"
    ref, stops = _stops(ctx)
    if ref.error is not None:
        return failed(name, ref.error, (ref.whole_exchange, ref.stream_exchange))
    if stops is None:
        reason = "the greedy answer is too short to take stop strings from"
        return not_applicable(name, reason, (ref.stream_exchange,))
    problems, evidence = [], [ref.whole_exchange, ref.stream_exchange]
    cases = (("within a chunk", stops.single), ("across chunks", stops.split))
    for where, stop in cases:
        for streamed in (False, True):
            reply, exchange = stopped(ctx, stop, streamed=streamed)
            text = ref.streamed.content if streamed else ref.whole.content
            problem = _stop_problem(reply, text, stop)
            if problem is not None:
                mode = "streamed" if streamed else "non-streamed"
                problems.append(f"{mode}, stop {where}: {problem}")
                evidence.append(exchange)
    if problems:
        return failed(name, "; ".join(problems), tuple(evidence))
    return passed(name, "stop strings within and across chunks never emitted, streamed and not")


def _length_ok(reply: Reply | StreamReply, max_tokens: int) -> bool | None:
    """finish_reason "length" when the answer ran to ``max_tokens``; None: cannot judge (it
    ended by itself without saying how many tokens it made)."""
    if reply.finish_reason == "length":
        return True
    completion = reply.usage.get("completion_tokens")
    if reply.finish_reason == "stop":
        if isinstance(completion, int):
            return completion < max_tokens  # ended by itself before the limit
        return None
    return False


def check_finish_reason(ctx: CheckContext) -> CheckResult:
    name = "finish_reason"
    ref, stops = _stops(ctx)
    if ref.error is not None:
        return failed(name, ref.error, (ref.whole_exchange, ref.stream_exchange))
    problems: list[str] = []
    evidence: list[Exchange] = []
    limit = int(ref.payload["max_tokens"])
    for mode, reply, exchange in (
        ("non-streamed", ref.whole, ref.whole_exchange),
        ("streamed", ref.streamed, ref.stream_exchange),
    ):
        if _length_ok(reply, limit) is False:
            problems.append(
                f"{mode}, cut at max_tokens: finish_reason {shown_value(reply.finish_reason)}"
            )
            evidence.append(exchange)
    if stops is not None:
        for streamed in (False, True):
            stop_reply, exchange = stopped(ctx, stops.single, streamed=streamed)
            if stop_reply.finish_reason != "stop":
                mode = "streamed" if streamed else "non-streamed"
                got = stop_reply.finish_reason
                problems.append(f"{mode}, a stop string hit: finish_reason {shown_value(got)}")
                evidence.append(exchange)
    if problems:
        return failed(name, "; ".join(problems), tuple(evidence))
    judged = "at max_tokens" + (" and at a stop string" if stops is not None else "")
    return passed(name, f"finish_reason right {judged}, streamed and not")


def check_stream_equals_nonstream(ctx: CheckContext) -> CheckResult:
    name = "stream_equals_nonstream"
    ref = reference(ctx)
    evidence = (ref.whole_exchange, ref.stream_exchange)
    if ref.error is not None:
        return failed(name, ref.error, evidence)
    whole, streamed = ref.whole, ref.streamed
    problems = []
    if streamed.content != whole.content:
        problems.append(f"content {differ_at(streamed.content, whole.content)}")
    if streamed.reasoning != whole.reasoning:
        problems.append(f"reasoning {differ_at(streamed.reasoning, whole.reasoning)}")
    if problems:
        return failed(name, "streamed and non-streamed " + "; ".join(problems), evidence)
    return passed(name, "streamed text equals non-streamed text at temperature 0", evidence)


def _completion_tokens(reply: Reply | StreamReply) -> int | None:
    value = reply.usage.get("completion_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_max_tokens(ctx: CheckContext) -> CheckResult:
    name = "max_tokens"
    limit = max(2, ctx.limits.max_tokens // 4)
    payload: dict[str, Any] = {**reference(ctx).payload, "max_tokens": limit}
    problems: list[str] = []
    evidence: list[Exchange] = []
    judged = 0
    whole, exchange = ask(ctx, payload)
    streamed, stream_exchange = ask_stream(ctx, payload)
    for mode, reply, shown in (
        ("non-streamed", whole, exchange),
        ("streamed", streamed, stream_exchange),
    ):
        evidence.append(shown)
        if not reply.ok:
            problems.append(f"{mode}: the request failed: {reply.failure}")
            continue
        tokens = _completion_tokens(reply)
        if tokens is not None:
            judged += 1
            if tokens > limit:
                problems.append(f"{mode}: {tokens} completion tokens for max_tokens {limit}")
        if isinstance(reply, StreamReply):
            chunks = len(reply.content_chunks)
            judged += 1
            if chunks > limit:
                problems.append(f"{mode}: {chunks} text chunks for max_tokens {limit}")
    if problems:
        return failed(name, "; ".join(problems), tuple(evidence))
    if not judged:
        return not_applicable(name, "no usage reported: completion tokens cannot be counted")
    return passed(name, f"at most {limit} tokens for max_tokens {limit}", tuple(evidence))


CHECKS = (
    ContractCheck(
        "stop_string",
        "a stop string is never emitted, also when it spans chunks; the text ends where it began",
        check_stop_string,
    ),
    ContractCheck(
        "finish_reason",
        'finish_reason "length" at max_tokens and "stop" at a stop string, streamed and not',
        check_finish_reason,
    ),
    ContractCheck(
        "stream_equals_nonstream",
        "streamed text equals non-streamed text at temperature 0",
        check_stream_equals_nonstream,
        compares_texts=True,
    ),
    ContractCheck("max_tokens", "no more tokens than max_tokens", check_max_tokens),
)
