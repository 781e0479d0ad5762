"""``kv_sweep``: what a quantized KV cache saves and what it costs, at a context depth.

One case is one cell of the sweep: a ``kv_bits`` setting (none, 8, 4, ...) at
``context_tokens`` of context, always against the same model's unquantized cache at the same
depth, run in the same case, interleaved (reference then setting, then setting then reference,
...), through mlx-lm's ``generate_step`` with ``kv_bits``/``kv_group_size``/
``quantized_kv_start`` (:class:`harness.backends.kv_runs.KVQuantizedRuns`). EOS is ignored.

- memory: ``kv_bytes``, the bytes the cache holds for the context (data, scales and biases of
  the tokens held, not the buffer grown in steps of 256); ``kv_bytes_ratio``, that over the
  unquantized cache's; ``peak_bytes``, MLX's peak over the setting's run, weights included
  (reset before each run, so the case's ``memory.mlx_peak_bytes`` is the last run's);
- speed: ``prefill_tps`` (context tokens / time to the first token) and ``decode_tps``
  ((generated - 1) / (last token - first token)), as ``throughput`` defines them, and each
  over the reference's in the same repeat (``prefill_vs_reference``, ``decode_vs_reference``);
- quality against the unquantized cache: the setting's run is fed the reference's greedy
  tokens (teacher forcing), so at every generated position both distributions follow the same
  prefix. ``first_token_agreement`` is 1 when the first greedy token is the same, else 0;
  ``kl`` the mean KL(reference || setting) of the next-token distributions over the generated
  positions (nats); ``divergence_token`` the first position whose greedy token differs from
  the reference's (``gen_tokens`` when none does): under teacher forcing this is exactly where
  a free-running greedy generation would first differ.

A model whose cache the backend cannot store so (mlx-lm cannot quantize a sliding-window layer;
a head dimension must divide by the group size) is skipped, ``not quantizable: why``. A setting
that changes the answer is measured, not failed, unless ``require_same_tokens`` asks
for the first N generated tokens to be the reference's: then it fails the case (a gate on
``kv_sweep.divergence_token`` does the same from a suite).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from harness.backends.base import BackendCapability, LoadedModel
from harness.backends.kv_runs import KVQuantizedRuns, KVRun, KVSetting, KVUnsupported
from harness.core.metrics import MetricSpec, VariesBy
from harness.core.types import Metric, Unit
from harness.probe.types import Capability, ReasonCode
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
from harness.scenarios.logprob_compare import Quality, divergence, speeds
from harness.scenarios.prompts import text_prompt

KV_BITS = (2, 3, 4, 5, 6, 8)  # what mx.quantize takes
NOT_QUANTIZABLE = "not quantizable"  # the skip of a model whose cache cannot be stored so

KV_BYTES = MetricSpec(
    "kv_sweep.kv_bytes",
    Unit.BYTES,
    False,
    "bytes the KV cache holds for the context tokens (quantized: data, scales and biases)",
    varies_by=VariesBy.CASE,
)
KV_RATIO = MetricSpec(
    "kv_sweep.kv_bytes_ratio",
    Unit.RATIO,
    False,
    "KV bytes / the unquantized cache's at the same depth",
    varies_by=VariesBy.CASE,
)
PEAK = MetricSpec(
    "kv_sweep.peak_bytes",
    Unit.BYTES,
    False,
    "MLX peak memory over the setting's run (weights, cache and activations)",
)
PREFILL = MetricSpec(
    "kv_sweep.prefill_tps", Unit.TOKENS_PER_SECOND, True, "context tokens / time to first token"
)
DECODE = MetricSpec("kv_sweep.decode_tps", Unit.TOKENS_PER_SECOND, True, "generated tokens/s")
PREFILL_RATIO = MetricSpec(
    "kv_sweep.prefill_vs_reference",
    Unit.RATIO,
    True,
    "prefill tok/s / the unquantized cache's, the runs interleaved",
    noise_floor=0.05,
)
DECODE_RATIO = MetricSpec(
    "kv_sweep.decode_vs_reference",
    Unit.RATIO,
    True,
    "decode tok/s / the unquantized cache's, the runs interleaved",
    noise_floor=0.05,
)
AGREEMENT = MetricSpec(
    "kv_sweep.first_token_agreement",
    Unit.RATIO,
    True,
    "1 when the first greedy token equals the unquantized cache's, else 0",
    varies_by=VariesBy.CASE,
)
KL = MetricSpec(
    "kv_sweep.kl",
    Unit.SCORE,
    False,
    "mean KL(unquantized || setting) of the next-token distributions over the generated "
    "positions, teacher-forced on the unquantized greedy tokens (nats)",
    noise_floor=0.05,
    varies_by=VariesBy.CASE,
)
DIVERGENCE = MetricSpec(
    "kv_sweep.divergence_token",
    Unit.TOKENS,
    True,
    "first generated position whose greedy token differs from the unquantized cache's "
    "(gen_tokens when none does)",
    varies_by=VariesBy.CASE,
)
TIMED: tuple[MetricSpec, ...] = (PEAK, PREFILL, DECODE, PREFILL_RATIO, DECODE_RATIO)
ONCE: tuple[MetricSpec, ...] = (KV_BYTES, KV_RATIO, AGREEMENT, KL, DIVERGENCE)


class KVSweepParams(Params):
    kv_bits: int | Literal["none"] | None = Field(
        None, description="bits of the quantized KV cache (2-8; none: the unquantized cache)"
    )
    context_tokens: int = Field(1024, ge=2, description="tokens of context prefilled (depth)")
    gen_tokens: int = Field(32, ge=2, description="greedy tokens generated and compared")
    kv_group_size: Literal[32, 64, 128] = Field(
        64, description="quantization group size (a head dimension must divide by it)"
    )
    quantized_kv_start: int = Field(
        0,
        ge=0,
        description="tokens the cache holds before it is quantized (mlx-lm's default is 5000)",
        json_schema_extra={"unit": "tokens"},
    )
    require_same_tokens: int | None = Field(
        None,
        ge=1,
        description="fail the case when greedy output differs from the unquantized cache's "
        "within the first N generated tokens (unset: measured only)",
        json_schema_extra={"unit": "tokens"},
    )

    @field_validator("kv_bits", mode="before")
    @classmethod
    def _bits(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("none", "null", ""):
            return None
        if value is not None and value not in KV_BITS:
            raise ValueError(f"kv_bits must be none or one of {', '.join(map(str, KV_BITS))}")
        return value

    @property
    def bits(self) -> int | None:
        """``kv_bits`` as a number (None: the unquantized cache)."""
        return self.kv_bits if isinstance(self.kv_bits, int) else None

    @property
    def setting(self) -> KVSetting:
        return KVSetting(self.bits, self.kv_group_size, self.quantized_kv_start)


def _ratio(a: float, b: float) -> float:
    return a / b if b and math.isfinite(b) else math.nan


class KVSweepScenario(BaseScenario[KVSweepParams]):
    name: ClassVar[str] = "kv_sweep"
    version: ClassVar[int] = 1
    params_model = KVSweepParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (*ONCE, *TIMED)
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.TEXT})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.TEXT_GENERATION}
    )

    def workload(self, params: KVSweepParams) -> Workload:
        """The context, then the generated tokens (the reference's cache is released before the
        setting's run starts)."""
        return Workload(params.context_tokens, params.gen_tokens)

    def run(self, ctx: ScenarioContext, params: KVSweepParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, LoadedModel):
            return lacks(ctx, BackendCapability.TEXT_GENERATION)
        if not isinstance(model, KVQuantizedRuns):
            return ScenarioOutput(
                (),
                skip_reason=f"{ReasonCode.CAPABILITY_MISSING.value}: backend {ctx.backend} "
                "cannot generate through a quantized KV cache",
            )
        prompt = text_prompt(model, params.context_tokens)
        try:
            return _Sweep(model, params, prompt).run(ctx)
        except KVUnsupported as exc:
            return ScenarioOutput(
                (), {"kv": params.setting.label}, skip_reason=f"{NOT_QUANTIZABLE}: {exc}"
            )


class _Sweep:
    def __init__(self, model: KVQuantizedRuns, params: KVSweepParams, prompt: list[int]) -> None:
        self.model = model
        self.params = params
        self.prompt = prompt
        self.reference_kv = KVSetting(None, params.kv_group_size)

    def _pair(self, index: int, forced: tuple[int, ...] | None) -> tuple[KVRun, KVRun]:
        """(reference, setting): the reference first on even runs, the setting first on odd
        ones (forced on the first reference's tokens, greedy being deterministic)."""
        gen = self.params.gen_tokens
        if index % 2 == 0 or forced is None:
            reference = self.model.kv_run(self.prompt, max_tokens=gen, kv=self.reference_kv)
            run = self.model.kv_run(
                self.prompt, max_tokens=gen, kv=self.params.setting, forced=reference.tokens
            )
            return reference, run
        run = self.model.kv_run(self.prompt, max_tokens=gen, kv=self.params.setting, forced=forced)
        reference = self.model.kv_run(self.prompt, max_tokens=gen, kv=self.reference_kv)
        return reference, run

    def run(self, ctx: ScenarioContext) -> ScenarioOutput:
        values: dict[str, tuple[list[float], list[float]]] = {s.name: ([], []) for s in TIMED}
        first: tuple[KVRun, KVRun] | None = None
        divergences: list[int] = []
        forced: tuple[int, ...] | None = None
        for index in range(ctx.warmup + ctx.repeats):
            reference, run = self._pair(index, forced)
            forced = forced or reference.tokens
            ctx.run_done(len(run.tokens))
            slot = 0 if index < ctx.warmup else 1
            if slot:
                first = first or (reference, run)
                divergences.append(divergence(reference.tokens, run.logprobs))
            ref_prefill, ref_decode = speeds(reference, len(self.prompt))
            prefill, decode = speeds(run, len(self.prompt))
            peak = math.nan if run.peak_bytes is None else float(run.peak_bytes)
            for spec, value in (
                (PEAK, peak),
                (PREFILL, prefill),
                (DECODE, decode),
                (PREFILL_RATIO, _ratio(prefill, ref_prefill)),
                (DECODE_RATIO, _ratio(decode, ref_decode)),
            ):
                values[spec.name][slot].append(value)
        metrics: list[Metric] = [metric(s, values[s.name][1], values[s.name][0]) for s in TIMED]
        if first is None:
            return ScenarioOutput(tuple(metrics), failures=("no measured repeat",))
        reference, run = first
        quality = Quality.of(reference, run)
        metrics = [
            metric(KV_BYTES, [float(run.kv_bytes)]),
            metric(KV_RATIO, [_ratio(run.kv_bytes, reference.kv_bytes)]),
            metric(AGREEMENT, [quality.first_token_agreement]),
            metric(KL, [quality.kl]),
            metric(DIVERGENCE, [float(quality.divergence_token)]),
            *metrics,
        ]
        return ScenarioOutput(
            tuple(metrics), self._artifacts(reference, run, divergences), self._failures(quality)
        )

    def _artifacts(self, reference: KVRun, run: KVRun, divergences: list[int]) -> dict[str, Any]:
        return {
            "kv": self.params.setting.label,
            "context_tokens": len(self.prompt),
            "gen_tokens": self.params.gen_tokens,
            "cache_types": list(run.cache_types),
            "reference_kv_bytes": reference.kv_bytes,
            "allocated_bytes": run.allocated_bytes,
            "reference_allocated_bytes": reference.allocated_bytes,
            "reference_peak_bytes": reference.peak_bytes,
            "reference_tokens": list(reference.tokens),
            "divergence_per_repeat": divergences,
        }

    def _failures(self, quality: Quality) -> tuple[str, ...]:
        need = self.params.require_same_tokens
        if need is None or quality.divergence_token >= min(need, self.params.gen_tokens):
            return ()
        return (
            f"kv_bits {self.params.bits or 'none'} changes the answer: the greedy output "
            f"differs from the unquantized cache's at generated token {quality.divergence_token} "
            f"(require_same_tokens: {need}; KL {quality.kl:.3g} nats)",
        )


@dataclass(frozen=True)
class KVSweepArtifacts(ScenarioArtifacts):
    """What a ``kv_sweep`` case records beside its metrics that the report reads."""

    kv: str | None = None  # the cache setting's label
    context_tokens: int | None = None  # the prompt's length: the depth the cache holds
    gen_tokens: int | None = None
    cache_types: tuple[str, ...] = ()


SCENARIO = KVSweepScenario()
