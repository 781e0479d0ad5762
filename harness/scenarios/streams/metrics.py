"""The serving scenario's metrics: one family per load point, named for the point.

``serving.c4.ttft_p90_s`` is the p90 time to first token at concurrency 4,
``serving.r0_5.goodput_rps`` the goodput at 0.5 requests/s. Each is one value a point (the
point's requests are its raw samples, kept in the case's artifacts). A percentile with too few
values to mean anything (:func:`harness.scenarios.streams.stats.needed_n`) is left out, as are
goodput and the SLO share without an SLO or with too few finished requests.

The scenario declares each figure as a pattern over points (``serving.c*.ttft_p90_s`` and
``serving.r*.ttft_p90_s``), so gates and comparisons know the unit and direction of every point,
whichever the suite sweeps (:class:`harness.core.metrics.MetricSpecs`).
"""

from __future__ import annotations

from harness.core.metrics import MetricSpec, PointFigure
from harness.core.types import Metric, Unit
from harness.scenarios.streams.schedule import LoadPoint
from harness.scenarios.streams.stats import QUANTILES, Percentiles, PointStats

PREFIX = "serving"


class Figure(PointFigure):
    """One metric of a load point, without the point: ``ttft_p90_s``."""

    def spec(self, point: LoadPoint) -> MetricSpec:
        return self.spec_named(metric_name(point, self.suffix), point.label)


COMPLETED = Figure("completed", Unit.COUNT, True, "requests completed", noise_floor=0.0)
ERRORS = Figure("errors", Unit.COUNT, False, "requests that failed", noise_floor=0.0)
REQUEST_RPS = Figure("request_rps", Unit.REQUESTS_PER_SECOND, True, "completed requests/s")
OUTPUT_TPS = Figure("output_tps", Unit.TOKENS_PER_SECOND, True, "output tokens/s, all requests")
GOODPUT = Figure(
    "goodput_rps", Unit.REQUESTS_PER_SECOND, True, "completed requests/s within every SLO"
)
SLO_SHARE = Figure("slo_share", Unit.RATIO, True, "share of finished requests within every SLO")

LATENCIES: tuple[tuple[str, str], ...] = (
    ("ttft", "time to first token"),
    ("tpot", "time per output token after the first"),
    ("itl", "inter-token latency (tokens counted per chunk)"),
    ("e2e", "end-to-end request time"),
)


def latency_figure(kind: str, quantile: int) -> Figure:
    description = dict(LATENCIES)[kind]
    floor = {50: 0.05, 90: 0.08, 99: 0.15}[quantile]
    return Figure(f"{kind}_p{quantile}_s", Unit.SECONDS, False, f"{description} p{quantile}", floor)


FIGURES: tuple[Figure, ...] = (
    COMPLETED,
    ERRORS,
    REQUEST_RPS,
    OUTPUT_TPS,
    *(latency_figure(kind, q) for kind, _ in LATENCIES for q in QUANTILES),
    GOODPUT,
    SLO_SHARE,
)

POINT_PATTERNS = ("c*", "r*")  # closed loop at a concurrency, open loop at a rate


def metric_name(point: LoadPoint, suffix: str) -> str:
    return f"{PREFIX}.{point.key}.{suffix}"


def point_specs(point: LoadPoint) -> tuple[MetricSpec, ...]:
    return tuple(figure.spec(point) for figure in FIGURES)


def declared_specs() -> tuple[MetricSpec, ...]:
    """One pattern spec per figure and kind of point: ``serving.c*.ttft_p90_s``."""
    return tuple(
        MetricSpec(
            f"{PREFIX}.{points}.{figure.suffix}",
            figure.unit,
            figure.higher_is_better,
            f"{figure.description} ({'concurrency' if points == 'c*' else 'request rate'})",
            noise_floor=figure.noise_floor,
        )
        for points in POINT_PATTERNS
        for figure in FIGURES
    )


def _latencies(stats: PointStats) -> dict[str, Percentiles]:
    return {"ttft": stats.ttft, "tpot": stats.tpot, "itl": stats.itl, "e2e": stats.e2e}


def point_metrics(point: LoadPoint, stats: PointStats) -> tuple[Metric, ...]:
    """The point's metrics that have a value (one sample each, with the figure's unit)."""
    values = figure_values(stats)
    return tuple(
        Metric(metric_name(point, figure.suffix), figure.unit, (value,))
        for figure in FIGURES
        if (value := values[figure.suffix]) is not None
    )


def figure_values(stats: PointStats) -> dict[str, float | None]:
    """Each figure's value by its suffix (None: none), for any scenario that names them."""
    values: dict[str, float | None] = {
        COMPLETED.suffix: float(stats.completed),
        ERRORS.suffix: float(stats.errors),
        REQUEST_RPS.suffix: stats.request_rps,
        OUTPUT_TPS.suffix: stats.output_tps,
        GOODPUT.suffix: stats.goodput_rps,
        SLO_SHARE.suffix: stats.slo_share,
    }
    for kind, spread in _latencies(stats).items():
        for q in QUANTILES:
            values[latency_figure(kind, q).suffix] = spread.at(q)
    return values
