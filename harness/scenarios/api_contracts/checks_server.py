"""Contract checks on the server's own behaviour: usage accounting, cached prompt tokens,
refusing bad parameters, surviving a client that hangs up, and keeping concurrent requests
apart.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from harness.backends.openai_client import (
    Reply,
    StreamReply,
    astream,
    async_client,
    post_bytes,
)
from harness.scenarios.api_contracts.asking import (
    BASE_PROMPT,
    ask,
    ask_stream,
    body,
    describe,
    prompt,
    request_text,
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
from harness.scenarios.parting import differ_at

HANG_UP_AFTER_EVENTS = 3
CUT_STREAM_LENGTH = 4  # x long_max_tokens: the stream the client leaves must still be running
MALFORMED_JSON = b'{"messages": [{"role": "user", "content": "unfinished'


def usage_int(value: Any) -> int | None:
    """A token count the server sent, or None when it is not an int."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _counts(usage: Mapping[str, Any]) -> tuple[int, int] | None:
    prompt_tokens = usage_int(usage.get("prompt_tokens"))
    completion = usage_int(usage.get("completion_tokens"))
    return None if prompt_tokens is None or completion is None else (prompt_tokens, completion)


def _shown(counts: tuple[int, int]) -> str:
    return f"prompt {counts[0]}, completion {counts[1]}"


def check_usage(ctx: CheckContext) -> CheckResult:
    name = "usage"
    payload = body(ctx, prompt(ctx, "usage accounting"))
    miss, miss_exchange = ask(ctx, payload)  # new to the cache
    streamed, stream_exchange = ask_stream(ctx, payload)  # a hit, streamed
    hit, hit_exchange = ask(ctx, payload)  # a hit, not streamed
    evidence = (miss_exchange, stream_exchange, hit_exchange)
    answers = (("first non-streamed", miss), ("streamed", streamed), ("repeated", hit))
    broken = [
        f"the {label} request failed: {reply.failure}" for label, reply in answers if not reply.ok
    ]
    if broken:
        return failed(name, "; ".join(broken), evidence)
    first, stream_counts, repeat = _counts(miss.usage), _counts(streamed.usage), _counts(hit.usage)
    if first is None or repeat is None:
        reason = "no usage (prompt_tokens, completion_tokens) in a non-streamed answer"
        return failed(name, reason, evidence)
    if stream_counts is None:
        reason = "no usage in the stream although stream_options.include_usage was set"
        return failed(name, reason, evidence)
    problems = []
    if stream_counts != repeat:
        problems.append(
            f"streamed usage ({_shown(stream_counts)}) != non-streamed ({_shown(repeat)})"
        )
    if repeat != first:
        problems.append(f"usage on a cache hit ({_shown(repeat)}) != on a miss ({_shown(first)})")
    if problems:
        return failed(name, "; ".join(problems), evidence)
    return passed(name, f"usage {_shown(first)}: streamed, non-streamed, hit and miss", evidence)


def cached_tokens(usage: Mapping[str, Any]) -> int | None:
    """``usage.prompt_tokens_details.cached_tokens``, or None when the server says nothing."""
    details = usage.get("prompt_tokens_details")
    return usage_int(details.get("cached_tokens")) if isinstance(details, Mapping) else None


def check_cached_tokens(ctx: CheckContext) -> CheckResult:
    name = "cached_tokens"
    text = prompt(ctx, "a repeated prefix " + " ".join([BASE_PROMPT] * 3))
    payload = body(ctx, text, max_tokens=4)
    first, first_exchange = ask(ctx, payload)
    second, second_exchange = ask(ctx, payload)
    evidence = (first_exchange, second_exchange)
    if not (first.ok and second.ok):
        return failed(name, f"a request failed: {first.failure or second.failure}", evidence)
    before, after = cached_tokens(first.usage), cached_tokens(second.usage)
    if before is None and after is None:
        reason = "the server reports no usage.prompt_tokens_details.cached_tokens"
        return not_applicable(name, reason, evidence)
    if after is None:
        return failed(name, "cached_tokens missing on the repeated prompt", evidence)
    if after <= 0:
        if ctx.limits.require_reuse:
            return failed(name, f"cached_tokens {after} on a repeated prompt", evidence)
        reason = (
            f"no reuse: cached_tokens {after} on a repeated prompt (a server may refuse a cache "
            "it cannot trust); a finding, not a failure unless the suite sets require_reuse"
        )
        return not_applicable(name, reason, evidence)
    return passed(name, f"cached_tokens {after} on the repeated prompt", evidence)


def _post_raw(ctx: CheckContext, content: bytes) -> Reply:
    """POST bytes that are not valid JSON (the other requests only send valid bodies)."""
    reply = post_bytes(ctx.client, ctx.endpoint, ctx.api.path, content, case_end=ctx.case_end)
    ctx.answers.append(reply)
    return reply


def _refused_as_json(status: int | None, raw: str, error: str | None) -> str | None:
    """None when the answer is a 4xx with a JSON object body, else what it was instead."""
    if status is None:
        return f"no answer ({error})"
    if not 400 <= status < 500:
        return f"HTTP {status}" + (f" ({error})" if error else "")
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    return None if isinstance(parsed, dict) else f"HTTP {status} without a JSON object body"


def check_invalid_params(ctx: CheckContext) -> CheckResult:
    name = "invalid_params"
    base = body(ctx, "Say hello.", max_tokens=4)
    wrong_input: dict[str, Any] = (
        {"messages": "hello", "max_tokens": 4} if ctx.api is Api.CHAT else {"max_tokens": 4}
    )
    cases: Sequence[tuple[str, dict[str, Any]]] = (
        ("max_tokens a string", {**base, "max_tokens": "ten"}),
        ("temperature a string", {**base, "temperature": "hot"}),
        ("messages not a list" if ctx.api is Api.CHAT else "no prompt", wrong_input),
    )
    problems: list[str] = []
    evidence: list[Exchange] = []
    raw = _post_raw(ctx, MALFORMED_JSON)
    shown = Exchange(f"POST {ctx.api.path} {MALFORMED_JSON.decode()}", describe(raw))
    answers: list[tuple[str, str | None, Exchange]] = [
        ("malformed JSON", _refused_as_json(raw.status, raw.raw, raw.error), shown)
    ]
    for label, payload in cases:
        reply, exchange = ask(ctx, payload)
        answers.append((label, _refused_as_json(reply.status, reply.raw, reply.error), exchange))
    streamed, stream_exchange = ask_stream(ctx, {**base, "max_tokens": "ten"})
    refused = _refused_as_json(streamed.status, streamed.raw, streamed.error)
    answers.append(("max_tokens a string, streamed", refused, stream_exchange))
    for label, problem, exchange in answers:
        evidence.append(exchange)
        if problem is not None:
            problems.append(f"{label}: {problem}")
    if problems:
        return failed(name, "; ".join(problems), tuple(evidence))
    return passed(name, f"{len(answers)} invalid requests refused with a JSON 4xx", tuple(evidence))


def check_disconnect(ctx: CheckContext) -> CheckResult:
    """The request after a hang-up against a warm control: the same request asked once more on
    a warm cache before the hang-up. The first (cold) answer is not the reference: a server may
    answer a prompt from its cache a little differently than cold, which is not corruption (that
    drift is named in the reason when it shows)."""
    name = "disconnect"
    payload = body(ctx, prompt(ctx, "a long voyage"))
    cold, cold_exchange = ask(ctx, payload)
    control, control_exchange = ask(ctx, payload)  # warm, no hang-up: the reference
    long = {**payload, "max_tokens": ctx.limits.long_max_tokens * CUT_STREAM_LENGTH}
    cut, cut_exchange = ask_stream(ctx, long, stop_after_chunks=HANG_UP_AFTER_EVENTS)
    time.sleep(ctx.limits.settle_s)
    after, after_exchange = ask(ctx, payload)
    evidence = (control_exchange, cut_exchange, after_exchange)
    if not (cold.ok and control.ok):
        return failed(
            name,
            f"a request before it failed: {cold.failure or control.failure}",
            (cold_exchange, control_exchange),
        )
    if cut.done:
        reason = "the stream ended before the client could hang up"
        return not_applicable(name, reason, evidence)
    if not after.ok:
        return failed(name, f"the request after a hang-up failed: {after.failure}", evidence)
    drift = ""
    if control.content != cold.content:
        parted = differ_at(control.content, cold.content)
        drift = f" (its warm and cold answers {parted}: not a hang-up's doing)"
    if after.content != control.content:
        where = differ_at(after.content, control.content)
        reason = (
            "after a client hung up mid-stream, the same greedy request and its warm control "
            f"{where}{drift}"
        )
        return failed(name, reason, (cold_exchange, *evidence))
    return passed(
        name,
        "a client hanging up mid-stream leaves the next answer as its warm control" + drift,
        evidence,
    )


# Two long shared prefixes, taken in turn, each request with its own ending: a server that mixes
# up the caches of requests sharing a prefix answers one request from another's tokens.
SHARED_PREFIXES = (
    "The harbour log of the northern lighthouse, kept by the keeper each night since the storm",
    "A recipe book found in the attic of the old mill, its pages stained with flour and ink",
)


def concurrent_payloads(ctx: CheckContext, ending: str = "") -> list[dict[str, Any]]:
    """``concurrency`` requests: prefixes shared in turn, each with an ending of its own (and
    ``ending`` after it: a set of prompts no server has seen yet)."""
    n = ctx.limits.concurrency
    return [
        body(
            ctx,
            prompt(
                ctx, f"{SHARED_PREFIXES[i % 2]}; entry {i + 1}: item {chr(65 + i % 26)}{ending}"
            ),
        )
        for i in range(n)
    ]


# The fresh round's prompts: new to the server, so whatever it caches for them is written by
# the batch (a prompt asked alone first already has its own entries, which a batch may leave).
FRESH_ENDING = ", first asked among others"


async def _together(ctx: CheckContext, payloads: Sequence[Mapping[str, Any]]) -> list[StreamReply]:
    async with async_client(ctx.limits.timeout_s, len(payloads)) as client:
        replies = await asyncio.gather(
            *(
                astream(client, ctx.endpoint, ctx.api.path, p, case_end=ctx.case_end)
                for p in payloads
            )
        )
    ctx.answers.extend(replies)
    return list(replies)


# The staggered round's prompts, each of its own length: a long first one (its shared prefix
# that many times: several prefill steps on a server that processes a prompt in steps), a
# short second, a middling third.
STAGGER_REPEATS = 18
STAGGER_ENDING = ", asked in turn"


def staggered_payloads(ctx: CheckContext) -> list[dict[str, Any]]:
    """Four new prompts of different lengths: long, short, middling, a little longer."""
    long = " ".join([SHARED_PREFIXES[0] + "."] * STAGGER_REPEATS)
    texts = (
        f"{long} Entry 1: item A{STAGGER_ENDING}",
        f"Entry 2: item B{STAGGER_ENDING}",
        f"{SHARED_PREFIXES[1]}; entry 3: item C{STAGGER_ENDING}",
        f"{SHARED_PREFIXES[1]}. Entry 4: item D, {SHARED_PREFIXES[0]}{STAGGER_ENDING}",
    )
    return [body(ctx, prompt(ctx, text)) for text in texts]


# When each of the staggered round's later requests is sent: the second on the first piece of
# the first's answer (mlx_lm.server writes ": keepalive n/total" while it processes a prompt,
# so the second joins a prompt still in prefill; a server that says nothing until its first
# token gets it while the first decodes), the third on the first's first event (decoding),
# the fourth together with the second: two requests joining one prompt in prefill at once, a
# batch of two joining a batch of one (mlx-lm 0.31.2, #1141: BatchKVCache.extend gave the
# joiners' empty keys the other side's batch size, so the batch lost a row and the generation
# thread died on the next step).
STAGGER_WHEN = (
    "sent first",
    "sent at the first's first byte or end",
    "sent at the first's first event or end",
    "sent at the first's first byte or end, with the second",
)


async def _staggered(ctx: CheckContext, payloads: Sequence[Mapping[str, Any]]) -> list[StreamReply]:
    """The first request streamed; the second and the fourth sent together as soon as its
    answer shows anything, the third once it carries an event; every one read to its end."""
    started, decoding = asyncio.Event(), asyncio.Event()

    def seen(events: int) -> None:
        started.set()
        if events > 0:
            decoding.set()

    def ended(_: object) -> None:  # the first ended before showing anything: send the rest
        started.set()
        decoding.set()

    async with async_client(ctx.limits.timeout_s, len(payloads)) as client:

        async def later(gate: asyncio.Event, payload: Mapping[str, Any]) -> StreamReply:
            await gate.wait()
            return await astream(client, ctx.endpoint, ctx.api.path, payload, case_end=ctx.case_end)

        first = asyncio.ensure_future(
            astream(
                client,
                ctx.endpoint,
                ctx.api.path,
                payloads[0],
                case_end=ctx.case_end,
                on_events=seen,
            )
        )
        first.add_done_callback(ended)
        replies = await asyncio.gather(
            first,
            later(started, payloads[1]),
            later(decoding, payloads[2]),
            later(started, payloads[3]),
        )
    ctx.answers.extend(replies)
    return list(replies)


def _staggered_problems(
    ctx: CheckContext, payloads: Sequence[Mapping[str, Any]], replies: Sequence[StreamReply]
) -> tuple[list[str], list[Exchange]]:
    """Each staggered answer against the same prompt asked alone after the round (not asked
    when a staggered request failed: a server that died would only time out again)."""
    problems: list[str] = []
    evidence: list[Exchange] = []
    shown = [
        Exchange(request_text(ctx, p, streamed=True), describe(r))
        for p, r in zip(payloads, replies, strict=True)
    ]
    for i, reply in enumerate(replies):
        if not reply.ok:
            problems.append(
                f"staggered request {i + 1} ({STAGGER_WHEN[i]}) failed: {reply.failure}"
            )
            evidence.append(shown[i])
    if problems:
        return problems, evidence
    for i, payload in enumerate(payloads):
        alone, alone_exchange = ask_stream(ctx, payload)
        if not alone.ok:
            problems.append(
                f"staggered request {i + 1} failed alone after the round: {alone.failure}"
            )
            evidence += [shown[i], alone_exchange]
        elif alone.content != replies[i].content:
            problems.append(
                f"staggered request {i + 1} ({STAGGER_WHEN[i]}): asked in turn, then alone, "
                f"texts {differ_at(replies[i].content, alone.content)}"
            )
            evidence += [shown[i], alone_exchange]
    return problems, evidence


def _compare(label: str, i: int, alone: StreamReply, reply: StreamReply) -> str | None:
    if not reply.ok:
        return f"request {i + 1} failed {label}: {reply.failure}"
    if reply.content != alone.content:
        return (
            f"request {i + 1}: {label} and alone, texts {differ_at(reply.content, alone.content)}"
        )
    return None


def check_concurrent(ctx: CheckContext) -> CheckResult:
    """Each request alone first, then all at once (prefixes shared in turn; set ``concurrency``
    past the server's batch size to run its queue), then each alone again: a batch that leaves
    another request's keys and values in a cache shows on the next request. Then a fresh round:
    prompts never asked, all at once first, then each alone, which must repeat its answer from
    the batch: a server that writes the cache of a prompt it has not seen from another request
    of the batch (mlx-lm 0.31.0: every prompt checkpoint of a batch got the last request's KV)
    shows only there, since a prompt asked alone first keeps its own entry. Last a staggered
    round: new prompts of different lengths arriving in turn, the second while the first is in
    its prompt (if the server says so) together with a fourth, and the third while it
    decodes, then each alone: a server that breaks a request joining a batch under way (mlx-lm
    0.31.2: ``ArraysCache.extend`` left the joiner out of a hybrid model's state, and
    ``BatchKVCache.extend`` a pair of joiners out of the keys; the generation thread died)
    shows there."""
    name = "concurrent"
    n = ctx.limits.concurrency
    payloads = concurrent_payloads(ctx)
    serial = [ask_stream(ctx, p) for p in payloads]
    together = asyncio.run(_together(ctx, payloads))
    again = [ask_stream(ctx, p) for p in payloads]
    fresh_payloads = concurrent_payloads(ctx, FRESH_ENDING)
    fresh = asyncio.run(_together(ctx, fresh_payloads))
    fresh_alone = [ask_stream(ctx, p) for p in fresh_payloads]
    stagger_payloads = staggered_payloads(ctx)
    staggered = asyncio.run(_staggered(ctx, stagger_payloads))
    problems: list[str] = []
    evidence: list[Exchange] = []
    for i, ((alone, alone_exchange), reply, (later, later_exchange)) in enumerate(
        zip(serial, together, again, strict=True)
    ):
        if not alone.ok:
            problems.append(f"request {i + 1} failed on its own: {alone.failure}")
            evidence.append(alone_exchange)
            continue
        exchange = Exchange(request_text(ctx, payloads[i], streamed=True), describe(reply))
        for label, answer, shown in (
            (f"among {n}", reply, exchange),
            (f"asked again after the {n}", later, later_exchange),
        ):
            problem = _compare(label, i, alone, answer)
            if problem is not None:
                problems.append(problem)
                evidence += [alone_exchange, shown]
    for i, (first, (later, later_exchange)) in enumerate(zip(fresh, fresh_alone, strict=True)):
        exchange = Exchange(request_text(ctx, fresh_payloads[i], streamed=True), describe(first))
        if not first.ok:
            problems.append(f"new request {i + 1} failed among {n}: {first.failure}")
            evidence.append(exchange)
            continue
        if not later.ok:
            problems.append(f"new request {i + 1} failed alone after the {n}: {later.failure}")
            evidence += [exchange, later_exchange]
        elif later.content != first.content:
            problems.append(
                f"new request {i + 1}: first asked among {n}, then alone, texts "
                f"{differ_at(later.content, first.content)}"
            )
            evidence += [exchange, later_exchange]
    stagger_problems, stagger_evidence = _staggered_problems(ctx, stagger_payloads, staggered)
    problems += stagger_problems
    evidence += stagger_evidence
    if problems:
        return failed(name, "; ".join(problems), tuple(evidence[:4]))
    first_exchange = (serial[0][1],) if serial else ()
    return passed(
        name,
        f"{n} concurrent greedy requests (two shared prefixes) give their serial texts, "
        f"and so does each asked again after them; {n} new prompts asked together first "
        "give the same texts asked alone after; 4 new prompts of different lengths sent in "
        "turn (the second and the fourth together at the first's first byte, the third at "
        "its first event) give the same texts asked alone after",
        first_exchange,
    )


CHECKS = (
    ContractCheck(
        "usage",
        "usage token counts equal streamed and not, and on a cache hit and a miss",
        check_usage,
    ),
    ContractCheck(
        "cached_tokens", "cached_tokens reported on a repeated prompt", check_cached_tokens
    ),
    ContractCheck(
        "invalid_params", "invalid parameters answered with a JSON 4xx", check_invalid_params
    ),
    ContractCheck(
        "disconnect",
        "a client hanging up mid-stream leaves the next request's answer unchanged",
        check_disconnect,
        compares_texts=True,
    ),
    ContractCheck(
        "concurrent",
        "concurrent greedy requests give exactly their serial texts",
        check_concurrent,
        compares_texts=True,
    ),
)
