"""``prompt_cache_lru``: replay a chat workload through mlx-lm's own LRU prompt cache.

The same trie-based ``LRUPromptCache`` mlx-lm's server uses: several conversations (sharing a
few system prompts) interleave, turn by turn; each request fetches the nearest cache (exact,
shorter prefix, or longer entry trimmed), generates, and inserts the result. Reports hit rate,
share of prompt tokens reused, evictions, and bytes per entry type; with ``verify`` each
request's greedy output is checked against a cold run (a corrupted shared cache shows here).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.backends.base import BackendCapability, PromptCaching
from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.probe.types import Capability
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
    metric,
)
from harness.scenarios.parting import first_mismatch
from harness.scenarios.prompt_cache_lru.probes import order_probe, trim_probe
from harness.scenarios.prompt_dependence import independence_line
from harness.scenarios.prompts import text_prompt

HIT_RATE = MetricSpec("prompt_cache_lru.hit_rate", Unit.RATIO, True, "requests served a cache")
REUSE = MetricSpec(
    "prompt_cache_lru.reused_share",
    Unit.RATIO,
    True,
    "prompt tokens taken from the cache / all prompt tokens",
)
EVICTIONS = MetricSpec(
    "prompt_cache_lru.evictions",
    Unit.COUNT,
    False,
    "entries dropped by the LRU limits (superseded prefixes not counted)",
)
PROBES_HELD = MetricSpec(
    "prompt_cache_lru.probes_held", Unit.COUNT, True, "probes of the class that held (of 2)"
)
BYTES = MetricSpec("prompt_cache_lru.cache_bytes", Unit.BYTES, False, "bytes held at the end")


class LruParams(Params):
    max_size: int = Field(4, ge=1, description="LRUPromptCache max entries")
    conversations: int = Field(4, ge=1, description="conversations interleaved")
    turns: int = Field(3, ge=1, description="turns per conversation")
    system_prompts: int = Field(2, ge=1, description="distinct system prompts shared")
    system_tokens: int = Field(64, ge=1, description="length of each system prompt")
    message_tokens: int = Field(12, ge=1, description="length of each user message")
    gen_tokens: int = Field(6, ge=1, description="tokens generated per turn")
    verify: bool = Field(True, description="compare every output with a cold generation")
    mode: Literal["replay", "probes"] = Field(
        "replay",
        description="replay: the chat workload; probes: the class itself, its eviction order "
        "(the entry just used survives) and a longer entry trimmed to a prompt (the answer "
        "against a cold run)",
    )
    probe_tokens: int = Field(48, ge=8, description="length of each probe's prompt")


def _present(lru: Any, key: str, tokens: list[int]) -> bool:
    try:
        lru._trie.get(key, tokens)
    except (KeyError, TypeError):
        return False
    return True


class PromptCacheLruScenario(BaseScenario[LruParams]):
    name: ClassVar[str] = "prompt_cache_lru"
    measures_time: ClassVar[bool] = False  # hit rate, reuse, evictions, bytes
    version: ClassVar[int] = 2  # 2: the order and trim probes
    params_model = LruParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (HIT_RATE, REUSE, EVICTIONS, BYTES, PROBES_HELD)
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.TEXT})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.TEXT_GENERATION, BackendCapability.PROMPT_CACHE}
    )

    def workload(self, params: LruParams) -> Workload:
        """A conversation's last request: system prompt, every message and earlier reply."""
        p = params
        prompt = p.system_tokens + p.turns * p.message_tokens + (p.turns - 1) * p.gen_tokens
        return Workload(prompt, p.gen_tokens)

    def run(self, ctx: ScenarioContext, params: LruParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, PromptCaching):
            return lacks(ctx, BackendCapability.PROMPT_CACHE)
        from mlx_lm.models.cache import LRUPromptCache

        p = params
        if p.mode == "probes":
            return self._run_probes(model, p)
        filler = text_prompt(
            model, p.system_tokens * p.system_prompts + p.message_tokens * p.conversations * p.turns
        )
        systems = [
            filler[i * p.system_tokens : (i + 1) * p.system_tokens] for i in range(p.system_prompts)
        ]
        offset = p.system_tokens * p.system_prompts
        lru = LRUPromptCache(max_size=p.max_size)
        key = "model"
        history = [list(systems[c % p.system_prompts]) for c in range(p.conversations)]
        kept: set[tuple[int, ...]] = set()
        hits = reused = total = evictions = 0
        kinds: dict[str, int] = {"exact": 0, "prefix": 0, "trimmed": 0, "miss": 0}
        failures: list[str] = []
        answers: set[tuple[int, ...]] = set()
        for turn in range(p.turns):
            for conv in range(p.conversations):
                start = offset + (turn * p.conversations + conv) * p.message_tokens
                tokens = history[conv] + filler[start : start + p.message_tokens]
                found = lru._trie.search(key, tokens) if len(lru) else None
                cache, rest = lru.fetch_nearest_cache(key, tokens)
                kind = self._kind(cache, rest, tokens, found)
                if cache is not None and not rest:  # exact hit: re-feed the last token
                    if model.untrimmable(cache) is None:
                        model.trim(cache, 1)
                        rest = tokens[-1:]
                    else:
                        cache, rest, kind = None, tokens, "miss"
                if cache is None:
                    cache = model.make_cache()
                kinds[kind] += 1
                hits += kind != "miss"
                reused += len(tokens) - len(rest)
                total += len(tokens)
                out = list(model.generate_cached(cache, rest, max_tokens=p.gen_tokens))
                answers.add(tuple(out))
                if p.verify and not failures:
                    cold = list(
                        model.generate_cached(model.make_cache(), tokens, max_tokens=p.gen_tokens)
                    )
                    diff = first_mismatch(cold, out)
                    if diff >= 0:
                        failures.append(
                            f"turn {turn} conversation {conv} ({kind} hit): output "
                            f"differs from a cold run at token {diff}"
                        )
                entry = tokens + out
                lru.insert_cache(key, entry, cache)
                kept.add(tuple(entry))
                for gone in [k for k in kept if not _present(lru, key, list(k))]:
                    kept.discard(gone)
                    if tuple(entry[: len(gone)]) != gone:
                        evictions += 1
                history[conv] = entry
        requests = p.turns * p.conversations
        if p.verify and not failures and requests > 1 and len(answers) == 1:
            failures.append(
                independence_line(
                    f"all {requests} requests (different conversations and turns) got the same "
                    "greedy tokens, so matching cold runs proves nothing"
                )
            )
        metrics = (
            metric(HIT_RATE, [hits / max(p.turns * p.conversations, 1)]),
            metric(REUSE, [reused / max(total, 1)]),
            metric(EVICTIONS, [float(evictions)]),
            metric(BYTES, [float(lru.nbytes)]),
        )
        artifacts = {
            "hits_by_kind": kinds,
            "entries": len(lru),
            "bytes_by_type": lru.stats_by_type(),
            "cache_types": model.cache_types(model.make_cache()),
        }
        return ScenarioOutput(metrics, artifacts, failures=tuple(failures))

    @staticmethod
    def _run_probes(model: PromptCaching, p: LruParams) -> ScenarioOutput:
        n = p.probe_tokens
        filler = text_prompt(model, 4 * n)
        prompts = [filler[i * n : (i + 1) * n] for i in range(3)]
        probes = (
            order_probe(model, prompts, p.gen_tokens),
            trim_probe(model, prompts[0], filler[3 * n : 3 * n + n // 2], p.gen_tokens),
        )
        failures = tuple(r.failure for r in probes if r.failure is not None)
        held = float(sum(r.failure is None for r in probes))
        return ScenarioOutput(
            (metric(PROBES_HELD, [held]),),
            {"probes": {r.name: r.outcome for r in probes}},
            failures=failures,
        )

    @staticmethod
    def _kind(cache: Any, rest: list[int], tokens: list[int], found: Any) -> str:
        """exact, prefix (a stored shorter prompt), trimmed (a longer entry cut back), miss."""
        if cache is None:
            return "miss"
        if not rest:
            return "exact"
        shorter = getattr(found, "shorter", None)
        if shorter is not None and len(shorter) == len(tokens) - len(rest):
            return "prefix"
        return "trimmed"


SCENARIO = PromptCacheLruScenario()
