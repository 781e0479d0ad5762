"""``structured_output``'s metrics: the shares of a run's judged answers (parsed, conforming,
correct against the reference) and each request's speed with the constraint and without it."""

from __future__ import annotations

import math
from collections.abc import Sequence

from harness.core.metrics import MetricSpec
from harness.core.types import Metric, Unit
from harness.scenarios.base import metric
from harness.scenarios.structured_output.pairs import Pair

PREFIX = "structured_output"
PARSE_RATE = MetricSpec(
    f"{PREFIX}.parse_rate", Unit.RATIO, True, "constrained answers that are JSON, per run"
)
CONFORM_RATE = MetricSpec(
    f"{PREFIX}.conform_rate",
    Unit.RATIO,
    True,
    "constrained answers that conform to their schema, per run",
)
CORRECT_RATE = MetricSpec(
    f"{PREFIX}.correct_rate",
    Unit.RATIO,
    True,
    "constrained answers whose fields equal the reference, per run (schemas with one)",
)
DECODE = MetricSpec(
    f"{PREFIX}.decode_tps", Unit.TOKENS_PER_SECOND, True, "decode tokens/s with the constraint"
)
FREE_DECODE = MetricSpec(
    f"{PREFIX}.unconstrained_decode_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "decode tokens/s of the same prompt without the constraint, same run",
)
COST = MetricSpec(
    f"{PREFIX}.cost_x",
    Unit.RATIO,
    False,
    "unconstrained decode tokens/s / constrained (1: the constraint costs nothing)",
)
TTFT = MetricSpec(
    f"{PREFIX}.ttft_s",
    Unit.SECONDS,
    False,
    "time to first token with the constraint (compiling it included)",
    noise_floor=0.05,
)
FREE_TTFT = MetricSpec(
    f"{PREFIX}.unconstrained_ttft_s",
    Unit.SECONDS,
    False,
    "time to first token without the constraint",
    noise_floor=0.05,
)
METRICS = (PARSE_RATE, CONFORM_RATE, CORRECT_RATE, DECODE, FREE_DECODE, COST, TTFT, FREE_TTFT)


def run_rates(pairs: Sequence[Pair]) -> dict[MetricSpec, float]:
    """The run's shares over its judged answers (a rejected request has none)."""
    judged = [(p.case, p.judged) for p in pairs if p.judged is not None]
    if not judged:
        return {}
    rates = {
        PARSE_RATE: sum(j.verdict.parsed for _, j in judged) / len(judged),
        CONFORM_RATE: sum(j.verdict.conforms for _, j in judged) / len(judged),
    }
    checked = [j for case, j in judged if case.reference is not None]
    if checked:
        rates[CORRECT_RATE] = sum(j.correct is True for j in checked) / len(checked)
    return rates


def pair_speeds(p: Pair) -> dict[MetricSpec, float]:
    return {
        DECODE: p.constrained.decode_tps,
        FREE_DECODE: p.unconstrained.decode_tps,
        COST: p.cost_x,
        TTFT: p.constrained.ttft_s,
        FREE_TTFT: p.unconstrained.ttft_s,
    }


def samples_of(runs: Sequence[Sequence[Pair]]) -> dict[MetricSpec, list[float]]:
    samples: dict[MetricSpec, list[float]] = {}
    for run in runs:
        for spec, value in run_rates(run).items():
            samples.setdefault(spec, []).append(value)
        for p in run:
            for spec, value in pair_speeds(p).items():
                if math.isfinite(value):
                    samples.setdefault(spec, []).append(value)
    return samples


def metrics_of(
    measured: Sequence[Sequence[Pair]], warm: Sequence[Sequence[Pair]]
) -> tuple[Metric, ...]:
    got, warmed = samples_of(measured), samples_of(warm)
    return tuple(metric(spec, got[spec], warmed.get(spec)) for spec in METRICS if got.get(spec))
