"""``quant_sweep``: what a weight quantisation mode saves and what it costs, and whether its
quantised matmul computes what its weights say.

One case is one mode on one model: one of mlx's weight quantisation modes
(``quant``: affine at 2-8 bits, mxfp4, nvfp4, mxfp8; ``none`` is the model as loaded) applied in
process to a copy of the loaded model (mlx-lm's ``quantize_model``, what ``mlx_lm.convert -q
--q-mode`` does), run beside the model as loaded in the same case, interleaved (as loaded then
quantised, then quantised then as loaded, ...), greedy through mlx-lm's ``generate_step``, EOS
ignored:

- memory: ``weight_bytes`` (the quantised parameters: data, scales and biases) and
  ``weight_bytes_ratio`` over the model's as loaded;
- speed: ``prefill_tps``, ``decode_tps`` as ``throughput`` defines them, each over the model's
  as loaded in the same repeat (``prefill_vs_reference``, ``decode_vs_reference``), and the
  hardware share: decode against the bandwidth-bound ceiling the quantised model's own bytes per
  token give, prefill against the compute-bound one (``decode_hw_share``, ``prefill_hw_share``;
  left out when a run passes a ceiling, as ``throughput`` does);
- quality against the model as loaded, as ``kv_sweep`` measures the cache: the quantised run is
  fed the greedy tokens of the model as loaded (teacher forcing); ``first_token_agreement``,
  ``kl`` (mean KL(as loaded || quantised), nats), ``divergence_token`` (where greedy output
  first differs);
- the matmul check: the same quantised weights dequantised into plain layers (the *twin*) and
  fed the same tokens once. Both compute one function, so only rounding separates them
  (float32 kernels: ~1e-7 nats); ``matmul_kl`` above ``max_matmul_kl`` fails the case, naming
  the mode: a quantised matmul that is wrong on some path (mlx#3854, nvfp4) is caught so.

A mode the installed mlx lacks, a model already quantised or one with no layer whose width
divides by the group size is skipped, ``n/a: why``, never an error.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from harness.backends.bandwidth import WORKER, read_bandwidth
from harness.backends.base import BackendCapability, LoadedModel, QuantUnsupported, WeightQuantizing
from harness.backends.decode_traffic import ReportsTraffic
from harness.backends.kv_runs import KVQuantizedRuns, KVRun, KVSetting
from harness.backends.mlx_runtime import reset_peaks
from harness.backends.weight_quant import QuantizedWeights
from harness.core.metrics import MetricSpec
from harness.core.types import Metric
from harness.probe.types import Capability
from harness.scenarios.base import (
    BaseScenario,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
    metric,
)
from harness.scenarios.logprob_compare import Quality, divergence, kl_divergence, speeds
from harness.scenarios.prompts import text_prompt
from harness.scenarios.quant_sweep import metrics as m
from harness.scenarios.quant_sweep.params import QuantSweepParams
from harness.scenarios.quant_sweep.roofline import Ceilings, ceilings

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

NOT_APPLICABLE = "n/a"  # the skip of a mode the installed mlx or the model cannot take
PLAIN = KVSetting(None)


def _ratio(a: float, b: float) -> float:
    return a / b if b and math.isfinite(b) else math.nan


def _kl(model: NDArray[np.float32], reference: NDArray[np.float32]) -> float:
    """Mean KL(reference || model), nats; a rounding's negative value is 0."""
    return max(0.0, kl_divergence(model, reference))


class QuantSweepScenario(BaseScenario[QuantSweepParams]):
    name: ClassVar[str] = "quant_sweep"
    version: ClassVar[int] = 1
    params_model = QuantSweepParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = m.ALL
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.TEXT})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.TEXT_GENERATION, BackendCapability.WEIGHT_QUANTIZATION}
    )

    def workload(self, params: QuantSweepParams) -> Workload:
        return Workload(params.prompt_tokens, params.gen_tokens)

    def run(self, ctx: ScenarioContext, params: QuantSweepParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, LoadedModel):
            return lacks(ctx, BackendCapability.TEXT_GENERATION)
        if not isinstance(model, WeightQuantizing) or not isinstance(model, KVQuantizedRuns):
            return lacks(ctx, BackendCapability.WEIGHT_QUANTIZATION)
        quant = params.weight_quant
        weights: QuantizedWeights | None = None
        if quant is not None:
            try:
                weights = model.quantize_weights(quant)
            except QuantUnsupported as exc:
                return ScenarioOutput(
                    (), {"quant": params.label}, skip_reason=f"{NOT_APPLICABLE}: {exc}"
                )
        found = read_bandwidth() if isinstance(model, ReportsTraffic) else None
        if found is not None and found.source == "measured" and found.measured_in == WORKER:
            reset_peaks()  # the measurement's buffer is no part of this case's memory peak
        prompt = text_prompt(model, params.prompt_tokens)
        as_loaded = model.weight_bytes()
        held = (as_loaded, as_loaded) if weights is None else (weights.weight_bytes, as_loaded)
        return _Sweep(model, weights, params, prompt, held).run(ctx, found)


class _Sweep:
    def __init__(
        self,
        model: KVQuantizedRuns,
        weights: QuantizedWeights | None,
        params: QuantSweepParams,
        prompt: list[int],
        weight_bytes: tuple[int, int],
    ) -> None:
        self.reference = model
        self.weight_bytes = weight_bytes  # (quantised, as loaded)
        self.weights = weights
        target = model if weights is None else weights.model
        assert isinstance(target, KVQuantizedRuns)
        self.target: KVQuantizedRuns = target
        self.params = params
        self.prompt = prompt

    def _pair(self, index: int, forced: tuple[int, ...] | None) -> tuple[KVRun, KVRun]:
        """(as loaded, quantised): as loaded first on even runs, quantised first on odd ones
        (forced on the first reference's tokens, greedy being deterministic)."""
        gen = self.params.gen_tokens
        if index % 2 == 0 or forced is None:
            reference = self.reference.kv_run(self.prompt, max_tokens=gen, kv=PLAIN)
            run = self.target.kv_run(self.prompt, max_tokens=gen, kv=PLAIN, forced=reference.tokens)
            return reference, run
        run = self.target.kv_run(self.prompt, max_tokens=gen, kv=PLAIN, forced=forced)
        reference = self.reference.kv_run(self.prompt, max_tokens=gen, kv=PLAIN)
        return reference, run

    def run(self, ctx: ScenarioContext, found: Any) -> ScenarioOutput:
        values: dict[str, tuple[list[float], list[float]]] = {s.name: ([], []) for s in m.TIMED}
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
            for spec, value in (
                (m.PREFILL, prefill),
                (m.DECODE, decode),
                (m.PREFILL_RATIO, _ratio(prefill, ref_prefill)),
                (m.DECODE_RATIO, _ratio(decode, ref_decode)),
            ):
                values[spec.name][slot].append(value)
        timed = [metric(s, values[s.name][1], values[s.name][0]) for s in m.TIMED]
        if first is None:
            return ScenarioOutput(tuple(timed), failures=("no measured repeat",))
        roof = ceilings(self.target, found, len(self.prompt), self.params.gen_tokens)
        metrics = [*self._quality(*first), *timed, *self._shares(roof, values)]
        artifacts = self._artifacts(first[0], divergences, roof)
        matmul = self._matmul(first[0])
        if matmul is None:
            return ScenarioOutput(tuple(metrics), artifacts)
        matmul_kl, matmul_at = matmul
        metrics += [
            metric(m.MATMUL_KL, [matmul_kl]),
            metric(m.MATMUL_DIVERGENCE, [float(matmul_at)]),
        ]
        return ScenarioOutput(tuple(metrics), artifacts, self._failures(matmul_kl, matmul_at))

    def _quality(self, reference: KVRun, run: KVRun) -> list[Metric]:
        quality = Quality.of(reference, run)
        weight_bytes, reference_bytes = self.weight_bytes
        return [
            metric(m.WEIGHT_BYTES, [float(weight_bytes)]),
            metric(m.WEIGHT_RATIO, [_ratio(weight_bytes, reference_bytes)]),
            metric(m.AGREEMENT, [quality.first_token_agreement]),
            metric(m.KL, [max(0.0, quality.kl)]),
            metric(m.DIVERGENCE, [float(quality.divergence_token)]),
        ]

    def _shares(
        self, roof: Ceilings, values: dict[str, tuple[list[float], list[float]]]
    ) -> list[Metric]:
        decode, prefill = values[m.DECODE.name], values[m.PREFILL.name]
        found = roof.shares(decode[1], prefill[1])
        warm = roof.shares(decode[0], prefill[0])
        return [
            metric(spec, found[kind], warm.get(kind))
            for spec, kind in ((m.DECODE_SHARE, "decode"), (m.PREFILL_SHARE, "prefill"))
            if kind in found
        ]

    def _matmul(self, reference: KVRun) -> tuple[float, int] | None:
        """(KL(twin || quantised), where their greedy tokens first differ), the twin fed the
        reference's tokens once; None for the model as loaded (no quantised matmul) or when
        the check is off."""
        if self.weights is None or not self.params.check_matmul:
            return None
        import numpy as np

        twin = self.weights.twin()  # held only for its one run
        assert isinstance(twin, KVQuantizedRuns)
        gen = self.params.gen_tokens
        plain = twin.kv_run(self.prompt, max_tokens=gen, kv=PLAIN, forced=reference.tokens)
        run = self.target.kv_run(self.prompt, max_tokens=gen, kv=PLAIN, forced=reference.tokens)
        greedy = tuple(int(t) for t in np.argmax(plain.logprobs, axis=-1).tolist())
        return _kl(run.logprobs, plain.logprobs), divergence(greedy, run.logprobs)

    def _artifacts(
        self, reference: KVRun, divergences: list[int], roof: Ceilings
    ) -> dict[str, Any]:
        quant = self.params.weight_quant
        found: dict[str, Any] = {
            "quant": self.params.label,
            "prompt_tokens": len(self.prompt),
            "gen_tokens": self.params.gen_tokens,
            "reference_tokens": list(reference.tokens),
            "divergence_per_repeat": divergences,
            **roof.facts,
        }
        if quant is not None and self.weights is not None:
            found.update(
                mode=quant.mode,
                bits=quant.bits,
                group_size=quant.group_size,
                quantized_layers=self.weights.layers,
                unchecked_layers=self.weights.unchecked,
                reference_weight_bytes=self.weights.reference_weight_bytes,
            )
        return found

    def _failures(self, matmul_kl: float, matmul_at: int) -> tuple[str, ...]:
        limit = self.params.max_matmul_kl
        if matmul_kl <= limit:
            return ()
        return (
            f"{self.params.label}: the quantised matmul disagrees with its own weights "
            f"dequantised: KL {matmul_kl:.3g} nats against the plain matmul (max_matmul_kl "
            f"{limit:g}), greedy tokens differ from generated token {matmul_at}",
        )


SCENARIO = QuantSweepScenario()
