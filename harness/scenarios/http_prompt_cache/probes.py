"""Two probes of a server's prompt cache over HTTP (``http_prompt_cache`` with ``mode: probes``):
the order it evicts in, and a longer cached entry cut back to a prompt. What the server reused
is read from ``usage.prompt_tokens_details.cached_tokens``; the requests are greedy
``/v1/completions`` (one cache entry each, the prompt and its answer, on mlx_lm.server).

The server is started with a small prompt cache of ``cache_entries`` entries
(mlx_lm.server ``--prompt-cache-size``). Every prompt starts with its own marker, so no two
share more than their first few tokens (a BOS token, a marker's first digit), except A and D,
which share a long prefix S:

1. A = S + question A, cold; then ``cache_entries - 1`` unrelated prompts: the cache is full,
   A its oldest entry.
2. D = S + question D: served from A's entry cut back to S (a longer entry trimmed). A is now the
   entry just used; D's own entry overflows the cache.
3. A again. **Order**: an LRU evicted an unrelated entry, so A comes back whole (cached_tokens
   one short of A's prompt); a cache that evicts in insertion order (FIFO) dropped A, the entry
   just used, and A gets only S back from D's entry (mlx-lm issue #1495). The unrelated prompts
   of step 1, asked again after it, must miss at least once, else the cache holds more than
   ``cache_entries`` and the order cannot be seen.
4. ``2 * cache_entries`` more unrelated prompts flush the cache; D again is cold
   (cached_tokens at most the markers' first tokens, checked). **Trim**: D's answer from the
   trimmed entry must be D's cold answer. When A and D get the same cold answer, a trim that
   kept A's tokens would not show: not judged.

A server that reuses nothing of A for D (cached_tokens 0, or a cache it cannot trim) makes both
probes not applicable, with the reason: a finding, not a failure.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

from harness.backends.base import Served
from harness.backends.openai_client import Reply, post, request_failure
from harness.core.check_types import CheckStatus, CheckVerdict
from harness.scenarios.prompt_dependence import independence_line

ISSUE_1495 = "https://github.com/ml-explore/mlx-lm/issues/1495"
LRU_ORDER = "lru_order"
LONGER_TRIMMED = "longer_trimmed"
MARKER_TOKENS = 8  # what two prompts with different markers may still share (BOS, a digit)


class ProbeFailed(Exception):
    """A request of the probes got no usable answer: one line, the case fails on it."""


@dataclass(frozen=True)
class Asked:
    """One request's answer and what the server says it reused."""

    text: str
    prompt_tokens: int
    cached_tokens: int | None


@dataclass(frozen=True)
class ProbeRun:
    """What the probes saw, in the order they asked."""

    a_cold: Asked
    d_warm: Asked
    a_again: Asked
    unused: tuple[Asked, ...]  # the unrelated prompts of the fill, asked again after A
    d_cold: Asked


def cached_of(reply: Reply) -> int | None:
    details = reply.usage.get("prompt_tokens_details")
    value = details.get("cached_tokens") if isinstance(details, dict) else None
    return value if isinstance(value, int) else None


def _asker(
    client: httpx.Client, model: Served, max_tokens: int, case_end: float | None
) -> Callable[[str], Asked]:
    def ask(prompt: str) -> Asked:
        body = {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0.0}
        reply = post(client, model.endpoint, "/v1/completions", body, case_end=case_end)
        if not reply.ok:
            raise ProbeFailed(f"request failed: {request_failure(reply, 'completions')}")
        prompt_tokens = reply.usage.get("prompt_tokens")
        return Asked(
            reply.content,
            prompt_tokens if isinstance(prompt_tokens, int) else 0,
            cached_of(reply),
        )

    return ask


def run_probes(
    client: httpx.Client,
    model: Served,
    texts: tuple[str, str, str],
    *,
    cache_entries: int,
    max_tokens: int,
    case_end: float | None = None,
) -> ProbeRun:
    """Ask the sequence of the module's docstring. ``texts``: the shared prefix S and the two
    questions (A's, D's); unrelated prompts are S's text behind other markers."""
    prefix, question_a, question_d = texts
    ask = _asker(client, model, max_tokens, case_end)
    shared = f"{secrets.token_hex(4)}: {prefix}"

    def unrelated() -> Asked:
        return ask(f"{secrets.token_hex(4)}: {prefix}")

    a_cold = ask(shared + question_a)
    fill = [f"{secrets.token_hex(4)}: {prefix}" for _ in range(cache_entries - 1)]
    for prompt in fill:
        ask(prompt)
    d_warm = ask(shared + question_d)
    a_again = ask(shared + question_a)
    unused = tuple(ask(prompt) for prompt in fill)
    for _ in range(2 * cache_entries):
        unrelated()
    d_cold = ask(shared + question_d)
    return ProbeRun(a_cold, d_warm, a_again, unused, d_cold)


def _not_applicable(name: str, why: str) -> CheckVerdict:
    return CheckVerdict(name, CheckStatus.NOT_APPLICABLE, why)


def reuse_gap(run: ProbeRun) -> str | None:
    """Why the probes cannot apply (the server reused nothing of A for D), or None."""
    if run.d_warm.cached_tokens is None:
        return "the server gives no usage.prompt_tokens_details.cached_tokens"
    if run.d_warm.cached_tokens <= MARKER_TOKENS:
        return (
            f"no reuse: a prompt sharing a long prefix with a cached entry reused "
            f"{run.d_warm.cached_tokens} tokens of it (a cache the server does not trim, or none)"
        )
    return None


def order_verdict(run: ProbeRun, cache_entries: int) -> CheckVerdict:
    """LRU (A, the entry just used, survived), FIFO (A evicted) or neither, from A's reuse."""
    gap = reuse_gap(run)
    if gap is not None:
        return _not_applicable(LRU_ORDER, gap)
    whole = run.a_again.prompt_tokens - 1
    reused = run.a_again.cached_tokens or 0
    shared = run.d_warm.cached_tokens or 0
    kept_unused = all((u.cached_tokens or 0) > MARKER_TOKENS for u in run.unused)
    if reused >= whole - 1 and not kept_unused:
        return CheckVerdict(LRU_ORDER, CheckStatus.PASS, f"A reused {reused} of {whole} tokens")
    if reused >= whole - 1:
        return CheckVerdict(
            LRU_ORDER,
            CheckStatus.UNJUDGED,
            f"nothing was evicted: the cache kept {cache_entries + 1} entries, so it holds more "
            f"than cache_entries ({cache_entries}); start the server with a prompt cache of "
            f"{cache_entries} entries (mlx_lm.server --prompt-cache-size {cache_entries})",
        )
    if reused <= shared + 1:
        return CheckVerdict(
            LRU_ORDER,
            CheckStatus.FAIL,
            f"LRU order: in a cache of {cache_entries} entries, the entry just used was evicted "
            f"by a new one and an unused one kept (A reused {reused} of {whole} tokens, only "
            f"the prefix D shares): eviction follows insertion, not use ({ISSUE_1495})",
        )
    return CheckVerdict(
        LRU_ORDER,
        CheckStatus.UNJUDGED,
        f"LRU order: A reused {reused} of {whole} tokens, neither its whole entry nor the "
        f"{shared} tokens D shares",
    )


def trim_verdict(run: ProbeRun) -> CheckVerdict:
    """D's answer from A's entry cut back to the shared prefix, against D's cold answer."""
    gap = reuse_gap(run)
    if gap is not None:
        return _not_applicable(LONGER_TRIMMED, gap)
    cold_cached = run.d_cold.cached_tokens or 0
    if cold_cached > MARKER_TOKENS:
        return CheckVerdict(
            LONGER_TRIMMED,
            CheckStatus.UNJUDGED,
            f"the cold control was not cold: D reused {cold_cached} tokens after the cache was "
            "flushed",
        )
    if run.a_cold.text == run.d_cold.text:
        return CheckVerdict(
            LONGER_TRIMMED,
            CheckStatus.UNJUDGED,
            independence_line(
                "prompts A and D (one prefix, two questions) got the same greedy text, so a "
                "trimmed entry that kept A's tokens would not change D's answer"
            ),
        )
    shared = run.d_warm.cached_tokens or 0
    if run.d_warm.text != run.d_cold.text:
        at = first_difference(run.d_warm.text, run.d_cold.text)
        return CheckVerdict(
            LONGER_TRIMMED,
            CheckStatus.FAIL,
            f"longer entry trimmed: a prompt served {shared} tokens of a longer cached entry "
            f"answered differently from its cold answer (from character {at}; both texts in "
            "the probes artifact)",
        )
    return CheckVerdict(
        LONGER_TRIMMED, CheckStatus.PASS, f"D reused {shared} tokens of A's entry, same answer"
    )


def first_difference(a: str, b: str) -> int:
    differ = (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
    return next(differ, min(len(a), len(b)))


def probe_artifact(run: ProbeRun) -> dict[str, Any]:
    """What each step saw (the evidence behind both verdicts): tokens reused and answers."""
    return asdict(run)
