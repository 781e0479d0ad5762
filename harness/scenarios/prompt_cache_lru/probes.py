"""Two probes of mlx-lm's own ``LRUPromptCache`` (the class its server keeps prompt caches in),
run on the model's real caches: the order it evicts in, and a longer entry trimmed to a prompt.

- **Order.** A cache of two entries holds A and B; A is fetched (used); C is inserted. An LRU
  evicts B, the entry not used; a cache that evicts in insertion order (FIFO) drops A, the entry
  just used (mlx-lm issue #1495: ``fetch_nearest_cache`` never refreshed recency).
- **Trim.** An entry holding prompt P and its answer serves a prompt that shares P's first half
  and goes on differently: the entry is cut back to the shared tokens, the rest is prefilled, and
  the greedy answer must be the cold one. On a model whose answer depends on its prompt, a cut in
  the wrong place (keys and values of tokens the prompt does not have) changes the answer.

Both say what they saw in one line; neither needs the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from harness.backends.base import PromptCaching
from harness.scenarios.parting import first_mismatch

ISSUE_1495 = "https://github.com/ml-explore/mlx-lm/issues/1495"
KEY = "model"


class Order(str, Enum):
    LRU = "lru"  # the entry used survives, the unused one is evicted
    FIFO = "fifo"  # the entry just used is evicted: eviction follows insertion, not use
    OTHER = "other"  # neither (both kept, or both gone)


@dataclass(frozen=True)
class ProbeResult:
    """One probe's verdict: ``failure`` is one line, or None when it held."""

    name: str
    outcome: str
    failure: str | None


def _present(lru: Any, tokens: Sequence[int]) -> bool:
    try:
        lru._trie.get(KEY, list(tokens))
    except (KeyError, TypeError):
        return False
    return True


def _entry(model: PromptCaching, tokens: Sequence[int], gen_tokens: int) -> tuple[list[int], Any]:
    """The prompt's tokens with its greedy answer, and a cache holding them, as a server
    inserts after a request."""
    cache = model.make_cache()
    out = list(model.generate_cached(cache, tokens, max_tokens=gen_tokens))
    return [*tokens, *out], cache


def order_probe(
    model: PromptCaching, prompts: Sequence[Sequence[int]], gen_tokens: int
) -> ProbeResult:
    """Insert A and B into a two-entry cache, fetch A, insert C: which of A and B is left."""
    from mlx_lm.models.cache import LRUPromptCache

    lru = LRUPromptCache(max_size=2)
    (a, a_cache), (b, b_cache), (c, c_cache) = (_entry(model, p, gen_tokens) for p in prompts[:3])
    lru.insert_cache(KEY, a, a_cache)
    lru.insert_cache(KEY, b, b_cache)
    cache, rest = lru.fetch_nearest_cache(KEY, a)
    if cache is None or rest:
        why = "missed" if cache is None else f"left {len(rest)} of {len(a)} tokens to prefill"
        return ProbeResult("lru_order", Order.OTHER.value, f"LRU order: an exact fetch {why}")
    lru.insert_cache(KEY, c, c_cache)
    kept_a, kept_b = _present(lru, a), _present(lru, b)
    if kept_a and not kept_b:
        return ProbeResult("lru_order", Order.LRU.value, None)
    if kept_b and not kept_a:
        return ProbeResult(
            "lru_order",
            Order.FIFO.value,
            "LRU order: in a cache of 2 entries, the entry just fetched was evicted by a new one "
            f"and the entry not used was kept: eviction follows insertion, not use ({ISSUE_1495})",
        )
    shown = "both kept" if kept_a else "both evicted"
    return ProbeResult(
        "lru_order",
        Order.OTHER.value,
        f"LRU order: a cache of 2 entries given a third kept neither order ({shown})",
    )


def trim_probe(
    model: PromptCaching, prompt: Sequence[int], other: Sequence[int], gen_tokens: int
) -> ProbeResult:
    """An entry of ``prompt`` and its answer serves ``prompt``'s first half followed by ``other``:
    the reused tokens and the greedy answer against a cold run."""
    from mlx_lm.models.cache import LRUPromptCache

    if model.untrimmable(model.make_cache()) is not None:
        return ProbeResult("longer_trimmed", "not trimmable", None)
    lru = LRUPromptCache(max_size=2)
    entry, cache = _entry(model, prompt, gen_tokens)
    lru.insert_cache(KEY, entry, cache)
    shared = len(prompt) // 2
    asked = [*prompt[:shared], *other]
    if asked[shared] == prompt[shared]:
        return ProbeResult("longer_trimmed", "not probed", "trim probe: the prompts do not part")
    fetched, rest = lru.fetch_nearest_cache(KEY, asked)
    if fetched is None:
        return ProbeResult(
            "longer_trimmed",
            "miss",
            f"longer entry not reused: a prompt sharing {shared} tokens with a cached entry "
            "was served no cache",
        )
    reused = len(asked) - len(rest)
    warm = list(model.generate_cached(fetched, rest, max_tokens=gen_tokens))
    cold = list(model.generate_cached(model.make_cache(), asked, max_tokens=gen_tokens))
    diff = first_mismatch(cold, warm)
    if diff >= 0:
        return ProbeResult(
            "longer_trimmed",
            "changed answer",
            f"longer entry trimmed to {reused} shared tokens: the greedy answer differs from a "
            f"cold run at token {diff}",
        )
    if reused != shared:
        return ProbeResult(
            "longer_trimmed",
            f"reused {reused}",
            f"longer entry trimmed to {reused} tokens, not to the {shared} the prompts share",
        )
    return ProbeResult("longer_trimmed", f"reused {reused}", None)
