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
device's read bandwidth (``harness.backends.bandwidth``, cached per machine) and the bytes one
decode step reads at the run's mean decode context (weights with quantization scales, plus the
KV cache) give the bandwidth-bound ceiling in tokens/s and each run's share of it; the
float32 matmul FLOP rate and the matmul FLOPs of one prompt token (2 per weight, attention
left out) give the compute-bound prefill ceiling and each run's share of it.
"""

from __future__ import annotations

import copy
import itertools
import math
import time
from typing import ClassVar

from pydantic import Field

from harness.backends.bandwidth import Bandwidth, read_bandwidth
from harness.backends.base import BackendCapability, LoadedModel, PromptCaching
from harness.backends.decode_traffic import (
    ReportsTraffic,
    ceiling_tps,
    mean_decode_context,
)
from harness.backends.mlx_runtime import reset_peaks
from harness.metrics import MetricSpec, VariesBy
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
from harness.scenarios.prompts import text_prompt
from harness.types import Metric, Unit

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
    "throughput.decode_ceiling_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "bandwidth-bound decode ceiling: read bandwidth / bytes per token",
    noise_floor=0.05,
    varies_by=VariesBy.CASE,
)
SHARE = MetricSpec(
    "throughput.decode_share",
    Unit.RATIO,
    True,
    "decode tok/s as a share of the bandwidth-bound ceiling",
    noise_floor=0.05,
)
PREFILL_CEILING = MetricSpec(
    "throughput.prefill_ceiling_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "compute-bound prefill ceiling: float32 matmul FLOP/s / matmul FLOPs per token",
    noise_floor=0.05,
)
PREFILL_SHARE = MetricSpec(
    "throughput.prefill_share",
    Unit.RATIO,
    True,
    "prefill tok/s as a share of the compute-bound ceiling",
    noise_floor=0.05,
)
ROOFLINE: tuple[MetricSpec, ...] = (BYTES_PER_TOKEN, CEILING, SHARE, PREFILL_CEILING, PREFILL_SHARE)


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


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile, ``q`` in [0, 100]."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


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
        found = read_bandwidth() if isinstance(model, ReportsTraffic) else None
        if found is not None and found.source == "measured":
            reset_peaks()  # the measurement's buffer is no part of this case's memory peak
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


def _roofline(
    model: object,
    found: Bandwidth | None,
    params: ThroughputParams,
    decode: tuple[list[float], list[float]],
    prefill: tuple[list[float], list[float]],
) -> tuple[tuple[Metric, ...], dict[str, object]]:
    """Bytes per token, the bandwidth-bound ceiling and each run's share of it, with the facts
    behind them; nothing when the model cannot say what it reads or mlx is not loaded."""
    if not isinstance(model, ReportsTraffic):
        return (), {"roofline": "not available: the backend does not report decode traffic"}
    if found is None:
        return (), {"roofline": "not available: mlx is not loaded in the worker"}
    traffic = model.decode_traffic()
    context = mean_decode_context(params.depth_tokens, params.prompt_tokens, params.gen_tokens)
    per_token = traffic.bytes_per_token(context)
    ceiling = ceiling_tps(found.bytes_per_s, per_token)
    metrics: tuple[Metric, ...] = (
        metric(BYTES_PER_TOKEN, [per_token]),
        metric(CEILING, [ceiling]),
        metric(SHARE, [v / ceiling for v in decode[1]], [v / ceiling for v in decode[0]]),
    )
    compute = ceiling_tps(found.flops_per_s, traffic.prefill_flops_per_token)
    if math.isfinite(compute):
        metrics += (
            metric(PREFILL_CEILING, [compute]),
            metric(
                PREFILL_SHARE,
                [v / compute for v in prefill[1]],
                [v / compute for v in prefill[0]],
            ),
        )
    return metrics, {
        "bandwidth": found.to_json(),
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
