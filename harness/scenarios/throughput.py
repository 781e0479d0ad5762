"""``throughput``: prefill and decode speed, time to first token, inter-token latency.

One run = one prompt of ``prompt_tokens`` tokens and ``gen_tokens`` generated tokens with EOS
ignored. Definitions (same as mlx-lm's own statistics):
- time to first token (TTFT) = time from the call until the first generated token is ready;
- prefill tokens/s = prompt tokens / TTFT;
- decode tokens/s = (generated - 1) / (time of last token - time of first token);
- inter-token latency = gaps between consecutive tokens (p50/p90/p99 per run);
- end-to-end = call to last token.
"""

from __future__ import annotations

import itertools
import time
from typing import ClassVar

from pydantic import Field

from harness.backends.base import BackendCapability, LoadedModel
from harness.metrics import MetricSpec
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
from harness.types import Unit

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


class ThroughputParams(Params):
    prompt_tokens: int = Field(128, ge=1, description="prompt length in tokens")
    gen_tokens: int = Field(32, ge=2, description="tokens to generate (EOS ignored)")
    ignore_eos: bool = Field(True, description="keep generating past EOS")


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
    )
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.TEXT})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.TEXT_GENERATION}
    )

    def workload(self, params: ThroughputParams) -> Workload:
        return Workload(params.prompt_tokens, params.gen_tokens)

    def run(self, ctx: ScenarioContext, params: ThroughputParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, LoadedModel):
            return lacks(ctx, BackendCapability.TEXT_GENERATION)
        prompt = text_prompt(model, params.prompt_tokens)
        runs = [
            timed_run(model, prompt, params.gen_tokens, params.ignore_eos)
            for _ in range(ctx.warmup + ctx.repeats)
        ]
        warm, measured = runs[: ctx.warmup], runs[ctx.warmup :]
        values = {spec.name: ([], []) for spec in self.metrics}  # type: dict[str, tuple[list[float], list[float]]]
        for is_warmup, group in ((True, warm), (False, measured)):
            for stamps in group:
                for spec, value in zip(self.metrics, _figures(stamps, len(prompt)), strict=True):
                    values[spec.name][0 if is_warmup else 1].append(value)
        metrics = tuple(
            metric(spec, values[spec.name][1], values[spec.name][0]) for spec in self.metrics
        )
        return ScenarioOutput(
            metrics,
            {
                "prompt_tokens": len(prompt),
                "generated_tokens": [len(s) for s in measured],
                "token_times_s": [[round(t, 6) for t in s] for s in measured],
            },
        )


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
