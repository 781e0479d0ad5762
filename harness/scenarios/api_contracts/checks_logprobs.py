"""The ``logprobs`` contract check: a chat request asking ``logprobs`` and ``top_logprobs: k``
gets one whole entry per generated token (its token, a finite logprob <= 0 and k alternatives),
alone and when other requests join it in a batch.

The batched round: a plain streamed request (long) is decoding; at its first event three
non-streamed requests join it at once: one asking 3 top logprobs, one asking 5, one asking
none. Each answer must carry exactly what its own request asked. A server that formats every
request of a batch with the arguments of the request it took last (mlx-lm 0.30.5-0.31.1,
fixed by #1072) gives one of them the wrong count, or blank entries (``{}``), or logprobs to
the plain one, whatever order they arrive in. Non-streamed: mlx_lm.server puts no logprobs in a
stream (any release), so a streamed answer could not show them.

Only when named: mlx-lm 0.30.4 kills its generation thread on a batched logprobs request
(NameError, #800), and no request after it is answered.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.backends.openai_client import (
    Reply,
    StreamReply,
    astream,
    async_client,
    post,
    sync_client,
)
from harness.scenarios.api_contracts.asking import (
    ask,
    body,
    describe,
    prompt,
    refused,
    request_text,
    shown_value,
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

TOP = 3  # top_logprobs of the request asked alone and of the first joiner
OTHER_TOP = 5  # the second joiner's: a server that mixes the two up shows the other count
PACER_LENGTH = 2  # x long_max_tokens: the plain stream the joiners join must still be running
LOGPROB_SLACK = 1e-6  # a logprob of 0 computed in floating point may come out a hair above
ENTRIES_SHOWN = 3  # problems named per answer, then a count


@dataclass(frozen=True)
class Asked:
    """One request of the check: its label in reasons, its body, the top count it asked
    (None: no logprobs at all)."""

    label: str
    payload: Mapping[str, Any]
    top: int | None


def _asking(ctx: CheckContext, label: str, topic: str, top: int | None) -> Asked:
    extra: dict[str, Any] = {"logprobs": True, "top_logprobs": top} if top is not None else {}
    return Asked(label, body(ctx, prompt(ctx, topic), **extra), top)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _logprob_problem(value: Any) -> str | None:
    number = _number(value)
    if number is None:
        return f"logprob {shown_value(value)} is no number"
    if not math.isfinite(number) or number > LOGPROB_SLACK:
        return f"logprob {shown_value(value)} is not a finite number <= 0"
    return None


def _entry_problem(entry: Any, top: int) -> str | None:
    """Why one ``logprobs.content`` entry is not whole, else None."""
    if not isinstance(entry, Mapping) or not entry:
        return f"{shown_value(entry)} (no token, logprob nor top_logprobs)"
    if not isinstance(entry.get("token"), str):
        return f"token {shown_value(entry.get('token'))} is no string"
    problem = _logprob_problem(entry.get("logprob"))
    if problem is not None:
        return problem
    alternatives = entry.get("top_logprobs")
    if not isinstance(alternatives, list):
        return f"top_logprobs {shown_value(alternatives)} is no list"
    if len(alternatives) != top:
        return f"{len(alternatives)} top_logprobs, asked {top}"
    for alternative in alternatives:
        if not isinstance(alternative, Mapping) or not isinstance(alternative.get("token"), str):
            return f"a top_logprobs item {shown_value(alternative)} has no token"
        problem = _logprob_problem(alternative.get("logprob"))
        if problem is not None:
            return f"a top_logprobs item's {problem}"
    return None


def _content_entries(reply: Reply) -> list[Any] | str:
    """``choices[0].logprobs.content``, or why there is none (one line)."""
    choices = reply.body.get("choices") if isinstance(reply.body, Mapping) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    logprobs = choice.get("logprobs") if isinstance(choice, Mapping) else None
    if logprobs is None:
        return "no logprobs in the answer"
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    if not isinstance(content, list):
        keys = ", ".join(sorted(logprobs)) if isinstance(logprobs, Mapping) else ""
        return f"logprobs has no content list (keys: {keys or shown_value(logprobs)})"
    return content


def _asked_problem(asked: Asked, reply: Reply) -> str | None:
    """Why ``reply`` does not carry what ``asked`` asked, else None: one whole entry per
    completion token with ``top`` alternatives, or no entries at all when it asked none."""
    entries = _content_entries(reply)
    if asked.top is None:
        if isinstance(entries, list) and entries:
            return f"{asked.label}: {len(entries)} logprobs entries, asked none"
        return None
    if isinstance(entries, str):
        return f"{asked.label}: {entries}"
    completion = reply.usage.get("completion_tokens")
    if isinstance(completion, int) and not isinstance(completion, bool):
        if len(entries) != completion:
            return f"{asked.label}: {len(entries)} logprobs entries for {completion} tokens"
    elif not entries:
        return f"{asked.label}: no logprobs entries"
    broken = [(i, p) for i, e in enumerate(entries) if (p := _entry_problem(e, asked.top))]
    if not broken:
        return None
    shown = "; ".join(f"entry {i + 1}: {p}" for i, p in broken[:ENTRIES_SHOWN])
    more = f" (and {len(broken) - ENTRIES_SHOWN} more)" if len(broken) > ENTRIES_SHOWN else ""
    return f"{asked.label}: {len(broken)} of {len(entries)} entries not whole: {shown}{more}"


def _spelled(reply: Reply) -> bool:
    entries = _content_entries(reply)
    if isinstance(entries, str):
        return False
    return "".join(str(e.get("token", "")) for e in entries) == reply.content


async def _joined(
    ctx: CheckContext, pacer: Mapping[str, Any], joiners: Sequence[Asked]
) -> tuple[StreamReply, list[Reply]]:
    """The plain ``pacer`` streamed; every joiner sent at once at its first event (or its end,
    when it shows none), each non-streamed on a client of its own; all read to their end."""
    decoding = asyncio.Event()

    def seen(events: int) -> None:
        if events > 0:
            decoding.set()

    def ended(_: object) -> None:
        decoding.set()

    def ask_one(asked: Asked) -> Reply:
        with sync_client(ctx.limits.timeout_s) as client:
            return post(client, ctx.endpoint, ctx.api.path, asked.payload, case_end=ctx.case_end)

    async def later(asked: Asked) -> Reply:
        await decoding.wait()
        return await asyncio.to_thread(ask_one, asked)

    async with async_client(ctx.limits.timeout_s, 1) as client:
        first = asyncio.ensure_future(
            astream(
                client, ctx.endpoint, ctx.api.path, pacer, case_end=ctx.case_end, on_events=seen
            )
        )
        first.add_done_callback(ended)
        answers = list(await asyncio.gather(*(later(a) for a in joiners)))
        paced = await first
    ctx.answers.extend([paced, *answers])
    return paced, answers


def check_logprobs(ctx: CheckContext) -> CheckResult:
    """A request asking 3 top logprobs, alone; then three requests (3, 5 and no logprobs)
    joining a plain stream at its first event: each answer carries exactly what it asked."""
    name = "logprobs"
    if ctx.api is not Api.CHAT:
        return not_applicable(name, "asks the chat API's logprobs and top_logprobs (api: chat)")
    alone = _asking(ctx, "the request alone", "logprobs asked alone", TOP)
    reply, exchange = ask(ctx, alone.payload)
    if refused(reply):
        return not_applicable(
            name, f"unsupported (rejected by the server): {reply.failure}", (exchange,)
        )
    if not reply.ok:
        return failed(name, f"the request with logprobs failed: {reply.failure}", (exchange,))
    problem = _asked_problem(alone, reply)
    if problem is not None:
        return failed(name, problem, (exchange,))
    entries = len(_content_entries(reply))
    spelled = (
        "their tokens spell the text"
        if _spelled(reply)
        else "their tokens do not spell the text (not judged: e.g. vocabulary pieces)"
    )
    pacer_tokens = ctx.limits.long_max_tokens * PACER_LENGTH
    pacer = body(ctx, prompt(ctx, "a plain stream others join"), max_tokens=pacer_tokens)
    joiners = (
        _asking(ctx, f"the joiner asking {TOP}", "first to join", TOP),
        _asking(ctx, f"the joiner asking {OTHER_TOP}", "second to join", OTHER_TOP),
        _asking(ctx, "the plain joiner", "third to join", None),
    )
    paced, answers = asyncio.run(_joined(ctx, pacer, joiners))
    shown = [
        Exchange(request_text(ctx, a.payload, streamed=False), describe(r))
        for a, r in zip(joiners, answers, strict=True)
    ]
    pacer_exchange = Exchange(request_text(ctx, pacer, streamed=True), describe(paced))
    evidence = (exchange, pacer_exchange, *shown)
    problems = [
        f"{a.label} failed: {r.failure}" for a, r in zip(joiners, answers, strict=True) if not r.ok
    ]
    if not paced.ok:
        problems.append(f"the plain stream they joined failed: {paced.failure}")
    if not problems:
        problems = [p for a, r in zip(joiners, answers, strict=True) if (p := _asked_problem(a, r))]
    if problems:
        return failed(
            name, "joining a plain stream at its first event: " + "; ".join(problems), evidence
        )
    return passed(
        name,
        f"{entries} whole entries ({TOP} top_logprobs each) for {entries} tokens, {spelled}; "
        f"three requests joining a plain stream at once ({TOP}, {OTHER_TOP} "
        "and no logprobs) each get what they asked",
        evidence,
    )


CHECKS = (
    ContractCheck(
        "logprobs",
        "logprobs and top_logprobs: one whole entry per token, alone and in a batch",
        check_logprobs,
        named_only=True,
    ),
)
