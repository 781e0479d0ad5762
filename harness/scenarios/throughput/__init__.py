"""``throughput``: prefill and decode speed, time to first token, inter-token latency.

One run = one prompt of ``prompt_tokens`` tokens and ``gen_tokens`` generated tokens with EOS
ignored. Definitions (same as mlx-lm's own statistics):
- time to first token (TTFT) = time from the call until the first generated token is ready;
- prefill tokens/s = prompt tokens / TTFT;
- decode tokens/s = (generated - 1) / (time of last token - time of first token);
- inter-token latency = gaps between consecutive tokens (p50/p90/p99 per run);
- end-to-end = call to last token.

``depth`` (llama-bench's ``-d``): the KV cache already holds ``depth`` tokens of text before
each run (prefilled untimed, afresh for each run), so prefill and decode are measured at that
context depth; it needs a backend with a prompt cache. At depth 0 the figures are those above.

Roofline (when the worker has mlx loaded and the model says what a decode step reads): the
ceilings are the hardware's (``harness.backends.bandwidth``, cached per machine): the device's
memory read bandwidth, measured with a streaming kernel that reaches it, and the bytes one
decode step reads at the run's mean decode context (weights with quantization scales, plus the
KV cache) give the bandwidth-bound decode ceiling in tokens/s and each run's share of it; the
device's float32 matmul FLOP rate and the matmul FLOPs of one prompt token (2 per weight,
attention left out) give the compute-bound prefill ceiling and each run's share of it. No run
can pass a hardware ceiling: when a share does (measured or warm-up run), the ceilings are
measured again once, and a share still above 100% is recorded as invalid (its metric left out,
``ceiling_invalid`` in the artifacts saying why). Kernel efficiency is decode's bytes/s against
MLX's own gemv kernel: MLX's speed, not the hardware's, so it may pass 1.
"""

from __future__ import annotations

import copy
import itertools
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from harness.backends.base import BackendCapability, LoadedModel, PromptCaching
from harness.backends.decode_traffic import (
    ReportsTraffic,
    ceiling_tps,
    mean_decode_context,
    share_over_limit,
)
from harness.backends.mlx_runtime import reset_peaks
from harness.core.metrics import MetricSpec, VariesBy
from harness.core.types import Metric, Unit
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
from harness.scenarios.percentiles import percentile
from harness.scenarios.prompts import text_prompt

if TYPE_CHECKING:
    from harness.backends.bandwidth import Bandwidth

PREFILL = MetricSpec("throughput.prefill_tps", Unit.TOKENS_PER_SECOND, True, "prompt tokens / TTFT")
DECODE = MetricSpec("throughput.decode_tps", Unit.TOKENS_PER_SECOND, True, "generated tokens/s")
TTFT = MetricSpec("throughput.ttft_s", Unit.SECONDS, False, "time to first token", noise_floor=0.05)
ITL_P50 = MetricSpec("throughput.itl_p50_s", Unit.SECONDS, False, "inter-token latency p50")
ITL_P90 = MetricSpec(
    "throughput.itl_p90_s", Unit.SECONDS, False, "inter-token latency p90", noise_floor=0.08
)
ITL_P99 = MetricSpec(
    "throughput.itl_p99_s", Unit.SECONDS, False, "inter-token latency p99", noise_floor=0.15
)
E2E = MetricSpec("throughput.e2e_s", Unit.SECONDS, False, "end-to-end time of one request")
BYTES_PER_TOKEN = MetricSpec(
    "throughput.bytes_per_token",
    Unit.BYTES,
    False,
    "bytes one decode step reads (weights + KV cache at the mean decode context)",
)
CEILING = MetricSpec(
    "throughput.decode_hw_ceiling_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "bandwidth-bound decode ceiling: the device's memory read bandwidth / bytes per token",
    noise_floor=0.05,
    varies_by=VariesBy.CASE,
)
SHARE = MetricSpec(
    "throughput.decode_hw_share",
    Unit.RATIO,
    True,
    "decode tok/s as a share of the bandwidth-bound ceiling (left out when above 1: the "
    "ceiling is then invalid)",
    noise_floor=0.05,
)
PREFILL_CEILING = MetricSpec(
    "throughput.prefill_hw_ceiling_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "compute-bound prefill ceiling: the device's float32 matmul FLOP/s / matmul FLOPs per token",
    noise_floor=0.05,
)
PREFILL_SHARE = MetricSpec(
    "throughput.prefill_hw_share",
    Unit.RATIO,
    True,
    "prefill tok/s as a share of the compute-bound ceiling (left out when above 1: the "
    "ceiling is then invalid)",
    noise_floor=0.05,
)
# Older records' roofline (before the hardware ceiling, bandwidth format 2): the ceiling was
# MLX's own kernel speed (median of 7), a different quantity from the hardware's. Their metrics
# carry these names (harness.results.migrations renames them as a record loads), so no
# comparison sets the two side by side; no case measures them today.
KERNEL_CEILING = MetricSpec(
    "throughput.decode_kernel_ceiling_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "an older record's decode ceiling: MLX's own kernel speed / bytes per token, not the "
    "hardware's",
    noise_floor=0.05,
)
KERNEL_SHARE = MetricSpec(
    "throughput.decode_kernel_share",
    Unit.RATIO,
    True,
    "an older record's decode tok/s as a share of MLX's own kernel speed, not the hardware's",
    noise_floor=0.05,
)
PREFILL_KERNEL_CEILING = MetricSpec(
    "throughput.prefill_kernel_ceiling_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "an older record's prefill ceiling: MLX's own matmul speed / FLOPs per token, not the "
    "hardware's",
    noise_floor=0.05,
)
PREFILL_KERNEL_SHARE = MetricSpec(
    "throughput.prefill_kernel_share",
    Unit.RATIO,
    True,
    "an older record's prefill tok/s as a share of MLX's own matmul speed, not the hardware's",
    noise_floor=0.05,
)
KERNEL_ROOFLINE: tuple[MetricSpec, ...] = (
    KERNEL_CEILING,
    KERNEL_SHARE,
    PREFILL_KERNEL_CEILING,
    PREFILL_KERNEL_SHARE,
)
KERNEL_EFFICIENCY = MetricSpec(
    "throughput.kernel_efficiency",
    Unit.RATIO,
    True,
    "decode bytes/s (tok/s x bytes per token) / MLX's own gemv bytes/s: MLX's kernel speed, "
    "not a ceiling (may pass 1)",
    noise_floor=0.05,
)
ROOFLINE: tuple[MetricSpec, ...] = (
    BYTES_PER_TOKEN,
    CEILING,
    SHARE,
    PREFILL_CEILING,
    PREFILL_SHARE,
    KERNEL_EFFICIENCY,
)
SHARE_REASON = "a share above 100%"  # why the ceilings are measured again after a case's runs


class ThroughputParams(Params):
    prompt_tokens: int = Field(128, ge=1, description="prompt length in tokens")
    gen_tokens: int = Field(32, ge=2, description="tokens to generate (EOS ignored)")
    ignore_eos: bool = Field(True, description="keep generating past EOS")
    depth: int | None = Field(
        None,
        ge=0,
        description="tokens already in the KV cache before each run (llama-bench -d); "
        "unset is 0 (and keeps runs from before comparable)",
    )

    @property
    def depth_tokens(self) -> int:
        return self.depth or 0


def timed_run(
    model: LoadedModel, prompt: list[int], gen_tokens: int, ignore_eos: bool
) -> list[float]:
    """Run one generation; return the time (s) of each token since the call started."""
    start = time.perf_counter()
    stamps: list[float] = []
    for _token in model.stream_tokens(prompt, max_tokens=gen_tokens, ignore_eos=ignore_eos):
        stamps.append(time.perf_counter() - start)
    return stamps


def filled_cache(model: PromptCaching, context: list[int]) -> object:
    cache = model.make_cache()
    model.prefill(cache, context)
    return cache


def fresh_copy(model: PromptCaching, base: object, context: list[int]) -> object:
    """A cache holding ``context``: a copy of ``base`` (filled once), else filled afresh."""
    try:
        return copy.deepcopy(base)
    except (TypeError, copy.Error):  # a backend's cache that cannot be copied
        return filled_cache(model, context)


def timed_run_at_depth(
    model: PromptCaching, cache: object, prompt: list[int], gen_tokens: int, ignore_eos: bool
) -> list[float]:
    """Time ``prompt`` and generation appended to ``cache`` (already holding the depth
    context); the time (s) of each token since the timed call started."""
    eos = frozenset() if ignore_eos else model.eos_token_ids
    start = time.perf_counter()
    stamps: list[float] = []
    for token in model.generate_cached(cache, prompt, max_tokens=gen_tokens):
        if token in eos:
            break
        stamps.append(time.perf_counter() - start)
    return stamps


class ThroughputScenario(BaseScenario[ThroughputParams]):
    name: ClassVar[str] = "throughput"
    version: ClassVar[int] = 1
    params_model = ThroughputParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        PREFILL,
        DECODE,
        TTFT,
        ITL_P50,
        ITL_P90,
        ITL_P99,
        E2E,
        *ROOFLINE,
    )
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.TEXT})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.TEXT_GENERATION}
    )

    def workload(self, params: ThroughputParams) -> Workload:
        return Workload(params.depth_tokens + params.prompt_tokens, params.gen_tokens)

    def run(self, ctx: ScenarioContext, params: ThroughputParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, LoadedModel):
            return lacks(ctx, BackendCapability.TEXT_GENERATION)
        if params.depth_tokens and not isinstance(model, PromptCaching):
            return lacks(ctx, BackendCapability.PROMPT_CACHE)
        found = _ceilings() if isinstance(model, ReportsTraffic) else None
        text = text_prompt(model, params.depth_tokens + params.prompt_tokens)
        context, prompt = text[: params.depth_tokens], text[params.depth_tokens :]
        runs = []
        at_depth = isinstance(model, PromptCaching) and params.depth_tokens > 0
        base = (
            filled_cache(model, context) if isinstance(model, PromptCaching) and at_depth else None
        )
        for _ in range(ctx.warmup + ctx.repeats):
            if isinstance(model, PromptCaching) and at_depth:
                cache = fresh_copy(model, base, context)
                runs.append(
                    timed_run_at_depth(model, cache, prompt, params.gen_tokens, params.ignore_eos)
                )
            else:
                runs.append(timed_run(model, prompt, params.gen_tokens, params.ignore_eos))
            ctx.run_done(len(runs[-1]))  # the live progress: repeat i of n, its tokens
        warm, measured = runs[: ctx.warmup], runs[ctx.warmup :]
        timing = self.metrics[: len(self.metrics) - len(ROOFLINE)]
        values = {spec.name: ([], []) for spec in timing}  # type: dict[str, tuple[list[float], list[float]]]
        for is_warmup, group in ((True, warm), (False, measured)):
            for stamps in group:
                for spec, value in zip(timing, _figures(stamps, len(prompt)), strict=True):
                    values[spec.name][0 if is_warmup else 1].append(value)
        metrics = tuple(metric(spec, values[spec.name][1], values[spec.name][0]) for spec in timing)
        artifacts: dict[str, object] = {
            "prompt_tokens": len(prompt),
            "depth_tokens": len(context),
            "generated_tokens": [len(s) for s in measured],
            "token_times_s": [[round(t, 6) for t in s] for s in measured],
        }
        roofline, facts = _roofline(model, found, params, values[DECODE.name], values[PREFILL.name])
        artifacts.update(facts)
        return ScenarioOutput(metrics + roofline, artifacts)


Samples = tuple[list[float], list[float]]  # (warm-up, measured)


def _ratios(samples: Samples, per_unit: float) -> Samples:
    return [v / per_unit for v in samples[0]], [v / per_unit for v in samples[1]]


@dataclass(frozen=True)
class _Runs:
    """What a case's runs are judged by: one decode step's bytes, one prompt token's FLOPs,
    and each run's decode and prefill tok/s."""

    bytes_per_token: float
    flops_per_token: float
    decode: Samples
    prefill: Samples


@dataclass(frozen=True)
class _Shares:
    """Each run's share of the two ceilings that ``found`` gives."""

    found: Bandwidth
    decode_ceiling: float
    decode: Samples
    prefill_ceiling: float
    prefill: Samples

    @staticmethod
    def of(found: Bandwidth, runs: _Runs) -> _Shares:
        ceiling = ceiling_tps(found.bytes_per_s, runs.bytes_per_token)
        compute = ceiling_tps(found.flops_per_s, runs.flops_per_token)
        return _Shares(
            found, ceiling, _ratios(runs.decode, ceiling), compute, _ratios(runs.prefill, compute)
        )

    def over(self) -> dict[str, float]:
        """The largest share of each ceiling that a run passed (``decode``, ``prefill``)."""
        found = {
            "decode": share_over_limit([*self.decode[0], *self.decode[1]]),
            "prefill": share_over_limit([*self.prefill[0], *self.prefill[1]]),
        }
        return {kind: share for kind, share in found.items() if share is not None}


def _over_text(over: dict[str, float]) -> str:
    return ", ".join(f"{kind} {share:.0%}" for kind, share in over.items())


def _ceilings() -> Bandwidth | None:
    """The device's ceilings, for a model that reports its decode traffic (imported here: a
    worker whose model does not never pays for the bandwidth module)."""
    from harness.backends.bandwidth import WORKER, read_bandwidth

    found = read_bandwidth()
    if found is not None and found.source == "measured" and found.measured_in == WORKER:
        reset_peaks()  # the measurement's buffer is no part of this case's memory peak
    return found


def _checked(found: Bandwidth, runs: _Runs) -> tuple[_Shares, dict[str, object]]:
    """The runs' shares of ``found``'s ceilings or, when a run passed one, of the ceilings
    measured again (once), with what happened: ``remeasured`` and, for each ceiling still
    passed, ``ceiling_invalid`` (its share is then left out)."""
    shares = _Shares.of(found, runs)
    over = shares.over()
    if not over:
        return shares, {}
    reason = f"{SHARE_REASON} ({_over_text(over)})"
    from harness.backends.bandwidth import read_bandwidth

    again = read_bandwidth(remeasure=reason)
    facts: dict[str, object] = {
        "remeasured": {"reason": reason, "before": found.to_json(), "done": again is not None}
    }
    if again is not None:
        shares = _Shares.of(again, runs)
        over = shares.over()
    after = "after re-measuring it" if again is not None else "and re-measuring it failed"
    if over:
        facts["ceiling_invalid"] = {
            kind: {
                "max_share": share,
                "reason": f"a {kind} run passed the measured ceiling ({share:.0%}) {after}",
            }
            for kind, share in over.items()
        }
    return shares, facts


def _roofline(
    model: object,
    found: Bandwidth | None,
    params: ThroughputParams,
    decode: Samples,
    prefill: Samples,
) -> tuple[tuple[Metric, ...], dict[str, object]]:
    """Bytes per token, the hardware ceilings and each run's share of them, kernel efficiency,
    with the facts behind them; nothing when the model cannot say what it reads or mlx is not
    loaded. A share above 100% re-measures the ceilings once; one still above is invalid."""
    if not isinstance(model, ReportsTraffic):
        return (), {"roofline": "not available: the backend does not report decode traffic"}
    if found is None:
        return (), {"roofline": "not available: mlx is not loaded in the worker"}
    traffic = model.decode_traffic()
    context = mean_decode_context(params.depth_tokens, params.prompt_tokens, params.gen_tokens)
    per_token = traffic.bytes_per_token(context)
    runs = _Runs(per_token, traffic.prefill_flops_per_token, decode, prefill)
    shares, facts = _checked(found, runs)
    invalid = shares.over()  # passed even after re-measuring
    metrics: tuple[Metric, ...] = (
        metric(BYTES_PER_TOKEN, [per_token]),
        metric(CEILING, [shares.decode_ceiling]),
    )
    if "decode" not in invalid:
        metrics += (metric(SHARE, shares.decode[1], shares.decode[0]),)
    if math.isfinite(shares.prefill_ceiling):
        metrics += (metric(PREFILL_CEILING, [shares.prefill_ceiling]),)
        if "prefill" not in invalid:
            metrics += (metric(PREFILL_SHARE, shares.prefill[1], shares.prefill[0]),)
    gemv = shares.found.mlx_gemv_bytes_per_s
    if gemv > 0:
        efficiency = _ratios(decode, gemv / per_token)
        metrics += (metric(KERNEL_EFFICIENCY, efficiency[1], efficiency[0]),)
    return metrics, {
        "bandwidth": shares.found.to_json(),
        **facts,
        "decode_traffic": {
            "weight_bytes": traffic.weight_bytes,
            "kv_bytes": traffic.kv_bytes(context),
            "fixed_state_bytes": traffic.fixed_state_bytes,
            "matmul_params": traffic.matmul_params,
            "mean_context_tokens": context,
        },
    }


def _figures(stamps: list[float], prompt_len: int) -> tuple[float, ...]:
    nan = float("nan")
    if not stamps:
        return (nan,) * 7
    ttft = stamps[0]
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    decode = (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else nan
    return (
        prompt_len / ttft,
        decode,
        ttft,
        percentile(gaps, 50),
        percentile(gaps, 90),
        percentile(gaps, 99),
        stamps[-1],
    )


SCENARIO = ThroughputScenario()
