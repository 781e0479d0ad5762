"""Open-loop arrival times (rate and spread over many seeded draws) and the points' keys."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from harness.scenarios.streams.schedule import arrival_offsets, closed, open_rate

# -- schedules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rate", "burstiness", "cv"),
    [(0.5, 1.0, 1.0), (4.0, 1.0, 1.0), (100.0, 1.0, 1.0), (4.0, 4.0, 0.5), (4.0, 0.25, 2.0)],
)
def test_arrivals_have_the_rate_and_spread_asked_for(
    rate: float, burstiness: float, cv: float
) -> None:
    offsets = arrival_offsets(rate, 20_000, seed=7, burstiness=burstiness)
    gaps = np.diff([0.0, *offsets])
    assert len(offsets) / offsets[-1] == pytest.approx(rate, rel=0.05)
    # gamma of shape k: coefficient of variation 1/sqrt(k) (1: exponential, i.e. Poisson)
    assert gaps.std() / gaps.mean() == pytest.approx(cv, rel=0.08)
    assert all(b >= a for a, b in itertools.pairwise(offsets))


def test_arrivals_follow_the_seed() -> None:
    assert arrival_offsets(2.0, 50, seed=1) == arrival_offsets(2.0, 50, seed=1)
    assert arrival_offsets(2.0, 50, seed=1) != arrival_offsets(2.0, 50, seed=2)
    assert arrival_offsets(2.0, 0, seed=1) == []
    with pytest.raises(ValueError):
        arrival_offsets(0.0, 5, seed=1)


@pytest.mark.parametrize(
    ("point", "key", "label"),
    [
        (closed(1), "c1", "concurrency 1"),
        (closed(16), "c16", "concurrency 16"),
        (open_rate(0.5), "r0_5", "0.5 req/s"),
        (open_rate(2), "r2", "2 req/s"),
        (open_rate(12.25), "r12_25", "12.25 req/s"),
    ],
)
def test_point_keys_and_labels(point: Any, key: str, label: str) -> None:
    assert (point.key, point.label) == (key, label)
