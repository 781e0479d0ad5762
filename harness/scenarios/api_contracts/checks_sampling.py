"""Contract checks on sampling parameters: seed, top_k, top_p, min_p, temperature 0,
frequency_penalty, xtc.

Each compares non-streamed answers to the same prompt: with a sampler that keeps one token
(``top_k: 1``, a tiny ``top_p``, ``min_p: 1``) at temperature 1 the answer must be the greedy
one; the same seed must give the same answer; temperature 0 must give the greedy answer
whatever the seed; a ``frequency_penalty`` at temperature 0 must give one answer with and
without a seed, asked right after a plain request (mlx-lm 0.31.2-0.31.3, #1225: a finished
plain request leaves a stale slot in the batch's list of logits processors, so the next
batched request is decoded without its penalty; a seeded one is served alone and keeps it).
XTC ("exclude top choices", ``xtc_probability`` / ``xtc_threshold``, mlx_lm.server and
llama-server) samples, so its text is not compared: the sampled request must be answered, and
the greedy request after it must give the greedy text (mlx-lm 0.30.4-0.31.3, #1257: the
server's XTC special tokens were an int and a list, the sampler raised, and the generation
thread died: that request and every one after it hung).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.scenarios.api_contracts.asking import BASE_PROMPT, ask, body, reference, refused
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

SAMPLING_TEMPERATURE = 1.0
TOP_P_ONE_TOKEN = 0.001  # not 0: some servers read top_p 0 as "off"
MIN_P_ONE_TOKEN = 1.0
SEED = 1234
PENALTY = 1.5  # frequency_penalty: large enough to change a greedy answer that repeats a token
# XTC on half of the steps, cutting every choice above 10% but the least likely of them
XTC = {"xtc_probability": 0.5, "xtc_threshold": 0.1}


def _against_greedy(
    ctx: CheckContext, name: str, variants: tuple[Mapping[str, Any], ...], what: str
) -> CheckResult:
    """Pass when every variant of the reference request answers the greedy text. A server
    that rejects a variant with a 4xx says it does not support the parameter ("unsupported",
    not applicable); one that answers with another text ignored it ("ignored", a failure)."""
    ref = reference(ctx)
    if ref.error is not None:
        return failed(name, ref.error, (ref.whole_exchange,))
    greedy = ref.whole.content
    evidence: list[Exchange] = [ref.whole_exchange]
    problems, rejected = [], []
    for extra in variants:
        reply, exchange = ask(ctx, {**ref.payload, **extra})
        evidence.append(exchange)
        shown = ", ".join(f"{k} {v}" for k, v in extra.items())
        if refused(reply):
            rejected.append(f"{shown}: {reply.failure}")
        elif not reply.ok:
            problems.append(f"{shown}: the request failed: {reply.failure}")
        elif reply.content != greedy:
            where = differ_at(reply.content, greedy)
            problems.append(f"ignored: {shown}: text and greedy text {where}")
    if problems:
        return failed(name, "; ".join(problems), tuple(evidence))
    if rejected:
        reason = "unsupported (rejected by the server): " + "; ".join(rejected)
        return not_applicable(name, reason, tuple(evidence))
    return passed(name, what, tuple(evidence))


def check_top_k(ctx: CheckContext) -> CheckResult:
    variant = {"temperature": SAMPLING_TEMPERATURE, "top_k": 1, "seed": 7}
    return _against_greedy(ctx, "top_k", (variant,), "top_k 1 at temperature 1 is greedy")


def check_top_p(ctx: CheckContext) -> CheckResult:
    variant = {"temperature": SAMPLING_TEMPERATURE, "top_p": TOP_P_ONE_TOKEN, "seed": 7}
    what = f"top_p {TOP_P_ONE_TOKEN} at temperature 1 is greedy"
    return _against_greedy(ctx, "top_p", (variant,), what)


def check_min_p(ctx: CheckContext) -> CheckResult:
    variant = {"temperature": SAMPLING_TEMPERATURE, "min_p": MIN_P_ONE_TOKEN, "seed": 7}
    what = f"min_p {MIN_P_ONE_TOKEN} at temperature 1 is greedy"
    return _against_greedy(ctx, "min_p", (variant,), what)


def check_temperature_zero(ctx: CheckContext) -> CheckResult:
    variants: tuple[dict[str, Any], ...] = ({"seed": 1}, {"seed": 2}, {})
    what = "temperature 0 gives the same text again, with any seed"
    return _against_greedy(ctx, "temperature_zero", variants, what)


def check_seed(ctx: CheckContext) -> CheckResult:
    name = "seed"
    ref = reference(ctx)
    payload = {**ref.payload, "temperature": SAMPLING_TEMPERATURE, "seed": SEED}
    first, first_exchange = ask(ctx, payload)
    second, second_exchange = ask(ctx, payload)
    evidence = (first_exchange, second_exchange)
    if not (first.ok and second.ok):
        why = first.failure or second.failure
        if refused(first):
            return not_applicable(name, f"unsupported (rejected by the server): {why}", evidence)
        return failed(name, f"a seeded request failed: {why}", evidence)
    if first.content != second.content:
        where = differ_at(first.content, second.content)
        reason = f"the same seed at temperature 1 gave two texts: {where}"
        return failed(name, reason, evidence)
    return passed(name, "the same seed at temperature 1 gives the same text", evidence)


def check_frequency_penalty(ctx: CheckContext) -> CheckResult:
    """A prompt of its own, the nonce first (new to the server's prompt cache past the chat
    template's first tokens), asked three times: penalized with a seed, plain, penalized
    without a seed. The two penalized answers must be the same text.

    The order matters on mlx-lm. The seeded request goes first: mlx_lm.server serves it alone,
    and a penalty served from a cached prefix sees only the uncached tail of the prompt in its
    window (0.32.x's single path passes ``prompt[prompt_cache_count:]``), which can change a
    greedy answer by itself. The plain one goes just before the unseeded one, so a request with
    no penalty has always just finished (#1225's stale slot). Not applicable when the penalty
    changes nothing here (whether it is applied cannot be told)."""
    name = "frequency_penalty"
    text = f"Run {ctx.nonce}, with a frequency penalty. {BASE_PROMPT}"
    # the longer limit: the more tokens, the likelier one repeats and the penalty shows
    payload = body(ctx, text, max_tokens=ctx.limits.long_max_tokens)
    penalized = {**payload, "frequency_penalty": PENALTY}
    seeded, seeded_exchange = ask(ctx, {**penalized, "seed": SEED})
    plain, plain_exchange = ask(ctx, payload)
    unseeded, unseeded_exchange = ask(ctx, penalized)
    evidence: tuple[Exchange, ...] = (seeded_exchange, plain_exchange, unseeded_exchange)
    if not plain.ok:
        return failed(name, f"the plain request failed: {plain.failure}", evidence)
    for reply in (unseeded, seeded):
        if refused(reply):
            reason = f"unsupported (rejected by the server): {reply.failure}"
            return not_applicable(name, reason, evidence)
        if not reply.ok:
            return failed(name, f"a penalized request failed: {reply.failure}", evidence)
    greedy = plain.content
    shown = f"frequency_penalty {PENALTY} at temperature 0"
    if unseeded.content != seeded.content:
        seeded_plain, seeded_plain_exchange = ask(ctx, {**payload, "seed": SEED})
        evidence = (*evidence, seeded_plain_exchange)
        if seeded_plain.ok and seeded_plain.content != greedy:  # temperature_zero's failure
            reason = (
                "a seed changes the greedy answer here (see temperature_zero), so the answers "
                "with and without one cannot be compared"
            )
            return not_applicable(name, reason, evidence)
        where = differ_at(unseeded.content, seeded.content)
        reason = f"{shown}: the answers without and with a seed {where}"
        if unseeded.content == greedy:
            reason += " (the one without a seed is the unpenalized greedy text: not applied)"
        elif seeded.content == greedy:
            reason += " (the one with a seed is the unpenalized greedy text: not applied)"
        return failed(name, reason, evidence)
    if seeded.content == greedy:
        reason = (
            f"{shown} gives the greedy answer, with and without a seed: ignored by the server "
            "(mlx-lm before 0.31.1) or no effect on this model's answer, so whether it is "
            "applied cannot be told"
        )
        return not_applicable(name, reason, evidence)
    what = f"{shown} changes the greedy answer, the same with and without a seed"
    return passed(name, what, evidence)


def check_xtc(ctx: CheckContext) -> CheckResult:
    """The reference request sampled at temperature 1 with XTC, with no seed (mlx_lm.server
    batches such a request), then the greedy one again: the first must be answered, the second
    must give the greedy text. Not applicable when the server refuses XTC (400 or 422)."""
    name = "xtc"
    ref = reference(ctx)
    if ref.error is not None:
        return failed(name, ref.error, (ref.whole_exchange,))
    shown = ", ".join(f"{k} {v}" for k, v in XTC.items())
    sampled, sampled_exchange = ask(
        ctx, {**ref.payload, "temperature": SAMPLING_TEMPERATURE, **XTC}
    )
    evidence: tuple[Exchange, ...] = (ref.whole_exchange, sampled_exchange)
    if sampled.status in (400, 422) and sampled.error is None:
        reason = f"unsupported (rejected by the server): {shown}: {sampled.failure}"
        return not_applicable(name, reason, evidence)
    if not sampled.ok:
        reason = f"a request with {shown} at temperature 1 failed: {sampled.failure}"
        return failed(name, reason, evidence)
    after, after_exchange = ask(ctx, ref.payload)
    evidence = (*evidence, after_exchange)
    if not after.ok:
        reason = f"the greedy request after one with {shown} failed: {after.failure}"
        return failed(name, reason, evidence)
    if after.content != ref.whole.content:
        where = differ_at(after.content, ref.whole.content)
        reason = f"the greedy request after one with {shown}: text and greedy text {where}"
        return failed(name, reason, evidence)
    what = (
        f"a request with {shown} at temperature 1 is answered, and the greedy request after "
        "it gives the greedy text"
    )
    return passed(name, what, evidence)


CHECKS = (
    ContractCheck(
        "seed",
        "the same seed gives the same text at temperature 1",
        check_seed,
        compares_texts=True,
    ),
    ContractCheck(
        "top_k", "top_k 1 at temperature 1 equals greedy", check_top_k, compares_texts=True
    ),
    ContractCheck(
        "top_p",
        "top_p keeping one token at temperature 1 equals greedy",
        check_top_p,
        compares_texts=True,
    ),
    ContractCheck(
        "min_p", "min_p 1 at temperature 1 equals greedy", check_min_p, compares_texts=True
    ),
    ContractCheck(
        "temperature_zero",
        "temperature 0 is deterministic, whatever the seed",
        check_temperature_zero,
        compares_texts=True,
    ),
    ContractCheck(
        "frequency_penalty",
        "frequency_penalty at temperature 0 gives one answer, with and without a seed, "
        "after a plain request",
        check_frequency_penalty,
        compares_texts=True,
    ),
    ContractCheck(
        "xtc",
        "a request sampled with XTC is answered, and the greedy one after it is unchanged",
        check_xtc,
    ),
)
