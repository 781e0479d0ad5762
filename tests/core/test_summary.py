"""The one summary of a metric's samples (issue 37, item 1): median, interval and n over the
finite samples, the dropped ones counted; and every reader (gate, judge, compare, report) shows
the same median for the same samples."""

from __future__ import annotations

import math

import pytest

from harness.core.metrics import MetricSpec
from harness.core.summary import Summary, median_ci
from harness.core.types import Metric, Unit
from harness.report.formatting import choose_scale
from harness.report.table import metric_cell, stats
from harness.results.compare import Thresholds, compare_metric
from harness.spec.gates import evaluate_gate, parse_gate

NAN, INF = math.nan, math.inf

# (samples, median, n, dropped, interval, counted); None: NaN
TABLE = [
    ((12.0, 10.0, 11.0), 11.0, 3, 0, (10.0, 12.0), "median of 3"),
    ((10.0, 11.0, NAN, 12.0, 13.0), 11.5, 4, 1, (10.0, 13.0), "median of 4, 1 sample dropped"),
    ((NAN, NAN), None, 0, 2, None, "median of 0, 2 samples dropped"),
    ((INF, 5.0, -INF), 5.0, 1, 2, (5.0, 5.0), "median of 1, 2 samples dropped"),
    ((), None, 0, 0, None, "median of 0"),
    # 6 samples or more: the order-statistics interval, not the range
    ((1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0), 5.0, 9, 0, (2.0, 8.0), "median of 9"),
]


@pytest.mark.parametrize(("samples", "median", "n", "dropped", "interval", "counted"), TABLE)
def test_a_summary_is_over_the_finite_samples(
    samples: tuple[float, ...],
    median: float | None,
    n: int,
    dropped: int,
    interval: tuple[float, float] | None,
    counted: str,
) -> None:
    got = Summary.of(samples)
    assert (got.n, got.dropped, got.counted()) == (n, dropped, counted)
    assert got.finite == tuple(sorted(s for s in samples if math.isfinite(s)))
    if median is None:
        assert math.isnan(got.median) and math.isnan(got.stddev)
        assert all(math.isnan(v) for v in got.interval)
    else:
        assert got.median == median
        assert got.interval == interval
    assert got.exact_interval is (n >= 6)
    assert Metric("x", Unit.COUNT, samples).summary == got
    if median is not None:
        assert Metric("x", Unit.COUNT, samples).median == median


@pytest.mark.parametrize(
    ("samples", "stddev", "note"),
    [
        ((5.0,), 0.0, ""),
        ((1.0, 3.0, NAN), math.sqrt(2), "1 sample dropped (NaN or infinite)"),
        ((1.0, 3.0, NAN, INF), math.sqrt(2), "2 samples dropped (NaN or infinite)"),
    ],
)
def test_the_spread_and_the_dropped_note(
    samples: tuple[float, ...], stddev: float, note: str
) -> None:
    got = Summary.of(samples)
    assert got.stddev == pytest.approx(stddev)
    assert got.dropped_note() == note


WITH_NAN = (10.0, 11.0, NAN, 12.0, 13.0)


def test_one_nan_sample_gives_the_same_median_in_the_gate_the_report_and_compare() -> None:
    """The issue's samples: the gate said "not evaluated: not measured", the report 11.5."""
    metric = Metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, WITH_NAN)
    gate = evaluate_gate(parse_gate(metric.name, ">= 5"), metric)
    assert gate.passed is True and gate.measured == 11.5
    assert gate.message == (
        "throughput.decode_tps ok: expected >= 5 tok/s, measured 11.5 tok/s "
        "(median of 4, 1 sample dropped; 95% interval 10..13)"
    )
    assert stats(metric).median == 11.5 and stats(metric).dropped == 1
    cell = metric_cell(metric, choose_scale(metric.unit, [11.5]))
    assert cell.sort == 11.5 and cell.title is not None
    assert cell.title.startswith("throughput.decode_tps: median of 4, 1 sample dropped; stddev ")
    spec = MetricSpec(metric.name, Unit.TOKENS_PER_SECOND, True, "decode")
    delta = compare_metric(spec, metric, metric, Thresholds())
    assert (delta.baseline_median, delta.current_median) == (11.5, 11.5)
    assert delta.note == "identical samples"


def test_a_relative_gate_counts_the_dropped_samples_of_each_side() -> None:
    name = "throughput.decode_tps"
    base = Metric(name, Unit.TOKENS_PER_SECOND, (100.0, 100.5, 99.5, 100.2, NAN))
    cur = Metric(name, Unit.TOKENS_PER_SECOND, (100.0, 100.4, 99.6, 100.1, 99.9))
    got = evaluate_gate(parse_gate(name, "-5%"), cur, baseline=base)
    assert got.passed is True
    assert "baseline ±" in got.message and "n=4, 1 dropped, current ±" in got.message


def test_all_nan_samples_are_not_measured() -> None:
    metric = Metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, (NAN, NAN))
    got = evaluate_gate(parse_gate(metric.name, ">= 5"), metric)
    assert (got.passed, got.measured) == (None, None)
    assert got.message == "throughput.decode_tps: not evaluated: not measured"


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5, -0.1])
def test_a_confidence_outside_0_1_is_refused(confidence: float) -> None:
    with pytest.raises(ValueError, match=rf"^confidence must be in \(0, 1\), got {confidence}$"):
        median_ci((1.0, 2.0, 3.0, 4.0, 5.0, 6.0), confidence)


@pytest.mark.parametrize(
    ("n", "interval"), [(6, (1.0, 6.0)), (20, (6.0, 15.0)), (100, (40.0, 61.0))]
)
def test_the_interval_of_many_samples_is_from_order_statistics(
    n: int, interval: tuple[float, float]
) -> None:
    """1..n: the k-th smallest and largest, k from the binomial tail (40 and 61 of 100)."""
    samples = [float(i) for i in range(n, 0, -1)]
    assert median_ci(samples) == interval
    assert Summary.of(samples).interval == interval and Summary.of(samples).exact_interval
