"""A point's figures against planted requests: percentiles that need enough values, TPOT,
throughput, goodput and the SLO verdict."""

from __future__ import annotations

import math

import pytest
from load_samples import PLANTED, sample

from harness.scenarios.streams.stats import (
    MIN_FINISHED,
    Slo,
    SloVerdict,
    needed_n,
    percentiles,
    point_stats,
)

# -- statistics --------------------------------------------------------------------------------


@pytest.mark.parametrize(("quantile", "needed"), [(50, 2), (90, 10), (99, 100)])
def test_percentiles_need_enough_values(quantile: int, needed: int) -> None:
    assert needed_n(quantile) == needed
    assert percentiles([1.0] * (needed - 1)).at(quantile) is None
    assert percentiles([1.0] * needed).at(quantile) == 1.0


def test_percentiles_interpolate_linearly_and_skip_non_finite() -> None:
    spread = percentiles([float(v) for v in range(100, 0, -1)] + [math.nan, math.inf])
    assert spread.n == 100
    assert (spread.at(50), spread.at(90), spread.at(99)) == pytest.approx((50.5, 90.1, 99.01))
    assert percentiles([]).n == 0 and percentiles([]).at(50) is None


def test_tpot_is_the_decode_time_per_token_after_the_first() -> None:
    assert sample(0, 0.1, 1.1, tokens=11).tpot_s == pytest.approx(0.1)
    assert sample(0, 0.1, 1.1, tokens=1).tpot_s is None


@pytest.mark.parametrize(
    ("slo", "good", "verdict"),
    [
        (Slo(ttft_s=0.5), 10, SloVerdict.MISSED),  # 10 of 22 within
        (Slo(ttft_s=1.0), 20, SloVerdict.MET),  # 20 of 22 >= 90%
        (Slo(ttft_s=1.0, e2e_s=1.5), 10, SloVerdict.MISSED),
        (Slo(tpot_s=0.1), 20, SloVerdict.MET),  # every completed one decodes at 0.1 s/token
        (Slo(tpot_s=0.099), 0, SloVerdict.MISSED),
        (Slo(), None, SloVerdict.NO_SLO),
    ],
)
def test_goodput_counts_completed_requests_within_every_slo(
    slo: Slo, good: int | None, verdict: SloVerdict
) -> None:
    stats = point_stats(PLANTED, cut=1, duration_s=4.0, slo=slo)
    assert (stats.sent, stats.completed, stats.errors, stats.cut) == (23, 20, 2, 1)
    assert stats.request_rps == pytest.approx(20 / 4.0)
    assert stats.output_tps == pytest.approx(20 * 11 / 4.0)
    assert stats.good == good and stats.slo_verdict is verdict
    if good is None:
        assert stats.goodput_rps is None and stats.slo_share is None
    else:
        assert stats.goodput_rps == pytest.approx(good / 4.0)
        assert stats.slo_share == pytest.approx(good / 22)  # of finished requests
    assert stats.ttft.at(50) == pytest.approx(0.525) and stats.ttft.n == 20
    assert stats.itl.n == 200 and stats.itl.at(99) == pytest.approx(0.01)
    assert stats.error_kinds == (("HTTP 500: boom", 2),)


def test_too_few_requests_leave_goodput_and_the_verdict_inconclusive() -> None:
    few = PLANTED[: MIN_FINISHED - 1]
    stats = point_stats(few, cut=0, duration_s=1.0, slo=Slo(ttft_s=10.0))
    assert stats.slo_verdict is SloVerdict.INCONCLUSIVE and not stats.conclusive
    assert stats.goodput_rps is None and stats.slo_share is None
    assert stats.good == len(few) and stats.ttft.at(90) is None and stats.ttft.at(50) is not None
