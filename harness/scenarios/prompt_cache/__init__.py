"""``prompt_cache``: what a prompt-cache hit saves, and whether the output stays the same.

Each repeat times a cold request (empty cache, whole prompt) and a warm one (a cache holding
the reusable part, only the rest processed), both greedy; the warm tokens must equal the cold
ones. Shapes:

- ``exact_repeat``: the same prompt again (the cache holds all but its last token);
- ``shared_prefix``: a prefix of ``reuse_ratio`` of the prompt is cached, a new suffix follows;
- ``multi_turn``: turn N+1 extends turn N's prompt and reply (the cache is what turn N left);
- ``divergent_edit``: an earlier part changed, so the longer cached prompt must be trimmed
  back to the common prefix; a cache that cannot be trimmed makes the case "not reusable".

Ideal speedup = tokens processed cold / tokens processed warm; efficiency = measured / ideal.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.backends.base import BackendCapability, LoadedModel, PromptCaching
from harness.core.metrics import MetricSpec
from harness.core.types import Metric, Unit
from harness.probe.types import Capability
from harness.scenarios.artifacts import ScenarioArtifacts
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
from harness.scenarios.prompt_dependence import foreign_prompt, independence_line
from harness.scenarios.prompts import FILLER, text_prompt

OTHER_TEXT = (
    "A different request arrives: summarise the quarterly figures, list three risks and "
    "propose one action for each, in plain words, without tables. "
)

COLD = MetricSpec(
    "prompt_cache.ttft_cold_s", Unit.SECONDS, False, "TTFT with an empty cache", noise_floor=0.05
)
WARM = MetricSpec(
    "prompt_cache.ttft_warm_s", Unit.SECONDS, False, "TTFT on a cache hit", noise_floor=0.05
)
SPEEDUP = MetricSpec(
    "prompt_cache.speedup_x", Unit.RATIO, True, "cold TTFT / warm TTFT", noise_floor=0.05
)
IDEAL = MetricSpec(
    "prompt_cache.ideal_speedup_x",
    Unit.RATIO,
    True,
    "tokens processed cold / tokens processed warm",
)
EFFICIENCY = MetricSpec(
    "prompt_cache.efficiency",
    Unit.RATIO,
    True,
    "measured speedup / ideal speedup",
    noise_floor=0.05,
)
REUSED = MetricSpec("prompt_cache.tokens_reused", Unit.TOKENS, True, "prompt tokens from cache")
RECOMPUTED = MetricSpec(
    "prompt_cache.tokens_recomputed", Unit.TOKENS, False, "prompt tokens processed on the hit"
)
CACHE_BYTES = MetricSpec(
    "prompt_cache.cache_bytes", Unit.BYTES, False, "bytes held by the reusable cache"
)
SAVE = MetricSpec("prompt_cache.save_s", Unit.SECONDS, False, "save the cache to a file")
LOAD = MetricSpec("prompt_cache.load_s", Unit.SECONDS, False, "load the cache from a file")


class PromptCacheParams(Params):
    shape: Literal["exact_repeat", "shared_prefix", "multi_turn", "divergent_edit"] = Field(
        "shared_prefix", description="how the warm request reuses the cached one"
    )
    prompt_tokens: int = Field(1000, ge=8, description="tokens of the full (last) prompt")
    reuse_ratio: float = Field(
        0.9, gt=0, lt=1, description="shared part, for prefix shapes (0-1 of prompt_tokens)"
    )
    gen_tokens: int = Field(16, ge=1, description="greedy tokens compared cold vs warm")
    turns: int = Field(3, ge=2, description="turns for multi_turn; the last one is measured")
    max_kv_size: int | None = Field(
        None, ge=8, description="RotatingKVCache of this size", json_schema_extra={"unit": "tokens"}
    )
    kv_bits: int | None = Field(None, description="QuantizedKVCache bits (4 or 8)")
    kv_group_size: int = Field(64, description="QuantizedKVCache group size (with kv_bits)")
    self_check: Literal["none", "wrong_prefix"] = Field(
        "none",
        description="wrong_prefix: build the warm cache from a different prefix on "
        "purpose, to prove the equivalence check catches a bad reuse",
    )


@dataclass(frozen=True)
class Plan:
    """Token-level description of one shape: what is cached and what each request sends."""

    full: list[int]  # the prompt of the measured request
    cached: list[int]  # what the warm cache holds before the request
    reusable: int  # how many leading tokens of ``cached`` the request can use
    history: list[list[int]]  # earlier turns to replay (multi_turn), else empty


def plan(model: LoadedModel, p: PromptCacheParams) -> Plan:
    n = p.prompt_tokens
    base = text_prompt(model, n)
    other = (model.encode(OTHER_TEXT) * (n // 8 + 1))[:n]
    if p.shape == "exact_repeat":
        return Plan(base, base[:-1], n - 1, [])
    keep = max(1, min(n - 1, round(p.reuse_ratio * n)))
    if p.shape == "shared_prefix":
        full = base[:keep] + other[: n - keep]
        return Plan(full, base[:keep], keep, [])
    if p.shape == "divergent_edit":
        # the cache holds the old prompt in full; the new one changed after ``keep`` tokens
        old = base[:keep] + [t for t in reversed(other)][: n - keep]
        new = base[:keep] + other[: n - keep]
        if old[keep] == new[keep]:
            old[keep] = (old[keep] + 1) % max(model.vocab_size(), 2)
        return Plan(new, old, keep, [])
    # multi_turn: the first turn is the shared start, each later turn adds a user message
    per_turn = max(1, (n - keep) // (p.turns - 1))
    first = base[:keep]
    messages = [other[i * per_turn : (i + 1) * per_turn] for i in range(p.turns - 1)]
    return Plan(first, first, keep, messages)


class PromptCacheScenario(BaseScenario[PromptCacheParams]):
    name: ClassVar[str] = "prompt_cache"
    version: ClassVar[int] = 1
    params_model = PromptCacheParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        COLD,
        WARM,
        SPEEDUP,
        IDEAL,
        EFFICIENCY,
        REUSED,
        RECOMPUTED,
        CACHE_BYTES,
        SAVE,
        LOAD,
    )
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.TEXT})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.TEXT_GENERATION, BackendCapability.PROMPT_CACHE}
    )

    def workload(self, params: PromptCacheParams) -> Workload:
        """The measured request: the full prompt (for multi_turn with the earlier replies in
        it), then the compared greedy tokens."""
        replies = (params.turns - 1) * params.gen_tokens if params.shape == "multi_turn" else 0
        return Workload(params.prompt_tokens + replies, params.gen_tokens)

    def run(self, ctx: ScenarioContext, params: PromptCacheParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, PromptCaching):
            return lacks(ctx, BackendCapability.PROMPT_CACHE)
        return _Runner(model, params).run(ctx.warmup, ctx.repeats)


class _Runner:
    def __init__(self, model: PromptCaching, p: PromptCacheParams) -> None:
        self.model = model
        self.p = p
        self.plan = plan(model, p)

    def _generate(self, cache: Any, tokens: list[int]) -> tuple[float, list[int]]:
        start = time.perf_counter()
        ttft = 0.0
        out: list[int] = []
        for token in self.model.generate_cached(
            cache,
            tokens,
            max_tokens=self.p.gen_tokens,
            kv_bits=self.p.kv_bits,
            kv_group_size=self.p.kv_group_size,
        ):
            if not out:
                ttft = time.perf_counter() - start
            out.append(token)
        return ttft, out

    def _fresh(self) -> Any:
        return self.model.make_cache(max_kv_size=self.p.max_kv_size)

    def _conversation(self) -> tuple[list[int], Any]:
        """Replay the earlier turns through one cache (each reply stays in it, as a server's
        does); return the measured turn's full prompt and the cache the turns left."""
        cache = self._fresh()
        history = list(self.plan.full)
        _, reply = self._generate(cache, history)
        history += reply
        for message in self.plan.history[:-1]:
            _, reply = self._generate(cache, message)
            history += message + reply
        return history + self.plan.history[-1], cache

    def _warm_cache(self) -> tuple[Any, list[int], int, str | None]:
        """(cache, tokens to send, tokens reused, not-reusable reason)."""
        plan = self.plan
        if plan.history:
            full, cache = self._conversation()
            reused = self.model.cache_offset(cache)
            return cache, full[reused:], reused, None
        cache = self._fresh()
        cached = list(plan.cached)
        if self.p.self_check == "wrong_prefix":
            cached = [(t + 7) % max(self.model.vocab_size(), 2) for t in cached]
        self.model.prefill(cache, cached)
        if len(cached) > plan.reusable:
            why = self.model.untrimmable(cache)
            if why is not None:
                return cache, [], 0, f"not reusable: {why}"
            self.model.trim(cache, len(cached) - plan.reusable)
        return cache, plan.full[plan.reusable :], plan.reusable, None

    def _full_prompt(self) -> list[int]:
        if not self.plan.history:
            return self.plan.full
        full, _cache = self._conversation()
        return full

    def _blind(self, full: list[int], reused: int, cold_out: list[int]) -> list[str]:
        """The warm and cold answers matched; but would a cache of another request's tokens
        have changed the answer? When it would not, the match proves nothing (one line)."""
        other = foreign_prompt(full, reused, self.model.vocab_size())
        _, other_out = self._generate(self._fresh(), other)
        if other_out != cold_out:
            return []
        return [
            independence_line(
                f"the prompt with its {reused} reusable tokens replaced by others gets the same "
                f"{len(cold_out)} greedy tokens"
            )
        ]

    def run(self, warmup: int, repeats: int) -> ScenarioOutput:
        full = self._full_prompt()
        values: dict[str, tuple[list[float], list[float]]] = {
            s.name: ([], []) for s in (COLD, WARM, SPEEDUP, EFFICIENCY)
        }
        failures: list[str] = []
        reused = recomputed = cache_bytes = 0
        types: list[str] = []
        cache: Any = None
        for index in range(warmup + repeats):
            slot = 0 if index < warmup else 1
            cold_ttft, cold_out = self._generate(self._fresh(), full)
            cache, send, reused, reason = self._warm_cache()
            types = self.model.cache_types(cache)
            if reason is not None:
                return ScenarioOutput(
                    (), {"cache_types": types, "shape": self.p.shape}, skip_reason=reason
                )
            cache_bytes = self.model.cache_nbytes(cache)
            recomputed = len(send)
            warm_ttft, warm_out = self._generate(cache, send)
            types = self.model.cache_types(cache)  # after the hit: kv_bits quantizes on use
            ideal = len(full) / max(recomputed, 1)
            speedup = cold_ttft / warm_ttft if warm_ttft else float("nan")
            for spec, value in (
                (COLD, cold_ttft),
                (WARM, warm_ttft),
                (SPEEDUP, speedup),
                (EFFICIENCY, speedup / ideal),
            ):
                values[spec.name][slot].append(value)
            diff = first_mismatch(cold_out, warm_out)
            if diff >= 0 and slot == 1 and not failures:
                failures.append(
                    f"warm output differs from cold at generated token {diff} "
                    f"(cold {cold_out[diff : diff + 3]} vs warm {warm_out[diff : diff + 3]})"
                )
            if reused + recomputed != len(full) and not failures:
                failures.append(
                    f"accounting: {reused} reused + {recomputed} recomputed != "
                    f"{len(full)} prompt tokens"
                )
        if not failures and self.p.self_check == "none" and reused > 0:
            failures += self._blind(full, reused, cold_out)
        save_s, load_s = self._save_load(cache)
        metrics: list[Metric] = [
            metric(spec, values[spec.name][1], values[spec.name][0])
            for spec in (COLD, WARM, SPEEDUP, EFFICIENCY)
        ]
        metrics += [
            metric(IDEAL, [len(full) / max(recomputed, 1)]),
            metric(REUSED, [float(reused)]),
            metric(RECOMPUTED, [float(recomputed)]),
            metric(CACHE_BYTES, [float(cache_bytes)]),
            metric(SAVE, [save_s]),
            metric(LOAD, [load_s]),
        ]
        artifacts = {
            "cache_types": types,
            "shape": self.p.shape,
            "prompt_tokens": len(full),
            "equivalent": not failures,
        }
        return ScenarioOutput(tuple(metrics), artifacts, failures=tuple(failures))

    def _save_load(self, cache: Any) -> tuple[float, float]:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "cache.safetensors"
            start = time.perf_counter()
            self.model.save_cache(cache, path)
            saved = time.perf_counter()
            self.model.load_cache(path)
            return saved - start, time.perf_counter() - saved


@dataclass(frozen=True)
class PromptCacheArtifacts(ScenarioArtifacts):
    """What a ``prompt_cache`` case records beside its metrics that the report reads."""

    cache_types: tuple[str, ...] = ()  # the model's cache classes, per layer kind
    equivalent: bool | None = None  # the warm answer = the cold one (None: not compared)


SCENARIO = PromptCacheScenario()

__all__ = ["FILLER", "SCENARIO", "PromptCacheParams", "first_mismatch", "plan"]
