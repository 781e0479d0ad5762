"""Per-point metrics: named for the point, with units, declared for gates and compare."""

from __future__ import annotations

from load_samples import PLANTED

from harness.core.metrics import MetricSpecs
from harness.core.types import Unit
from harness.scenarios.streams.metrics import declared_specs, point_metrics
from harness.scenarios.streams.schedule import closed
from harness.scenarios.streams.stats import (
    Slo,
    point_stats,
)


def test_point_metrics_are_named_for_the_point_with_units() -> None:
    stats = point_stats(PLANTED, cut=0, duration_s=4.0, slo=Slo(ttft_s=1.0))
    metrics = {m.name: m for m in point_metrics(closed(4), stats)}
    assert metrics["serving.c4.request_rps"].unit is Unit.REQUESTS_PER_SECOND
    assert metrics["serving.c4.output_tps"].unit is Unit.TOKENS_PER_SECOND
    assert metrics["serving.c4.ttft_p90_s"].unit is Unit.SECONDS
    assert metrics["serving.c4.goodput_rps"].samples == (5.0,)
    assert metrics["serving.c4.errors"].samples == (2.0,)
    assert "serving.c4.ttft_p99_s" not in metrics  # 20 values cannot give a p99
    assert "serving.c4.itl_p99_s" in metrics  # 200 gaps can
    declared = MetricSpecs(declared_specs())  # patterns: every point, on the grid or not
    for name, m in metrics.items():
        assert declared[name].unit is m.unit  # gates and compare know each one
    assert not declared["serving.r0_5.ttft_p90_s"].higher_is_better
    assert declared["serving.r0_5.goodput_rps"].higher_is_better
    assert declared["serving.c3.ttft_p90_s"].name == "serving.c3.ttft_p90_s"
    assert not declared["serving.c3.ttft_p90_s"].higher_is_better
    assert "serving.x3.ttft_p90_s" not in declared and "serving.c3.nothing" not in declared
