"""The knee: the highest load meeting the SLO, and its interval.

Points sorted by load; the knee is the highest point of the run of points that met the SLO
(and kept up) from the lowest one up: a point above a miss does not count, since the load
between them was not shown to be met. Its interval comes from the same rule applied to each
bootstrap resample (every point resampled at once: :mod:`harness.scenarios.saturation.bootstrap`)
: the knee of each resample, and the ``confidence`` central share of those knees (lower and
upper points of the measured ones, never a load that was not measured). 0 stands for "no
point met it" in an interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class KneePoint:
    value: float
    good: bool  # met the SLO and kept up (the point's own verdict)
    kept_up: bool  # not over-saturated
    resampled_met: tuple[bool, ...]  # per bootstrap resample; () when not judged


@dataclass(frozen=True)
class Knee:
    value: float | None  # None: the lowest point missed the SLO
    low: float | None  # the interval (0.0: some resamples met no point)
    high: float | None
    resamples: int


def _prefix_top(points: Sequence[KneePoint], good: Sequence[bool]) -> float:
    top = 0.0
    for point, ok in zip(points, good, strict=True):
        if not ok:
            break
        top = point.value
    return top


def knee(points: Sequence[KneePoint], confidence: float) -> Knee:
    """The knee of ``points`` (any order) and its bootstrap interval (None when a point was not
    judged: too few finished requests)."""
    ordered = sorted(points, key=lambda p: p.value)
    top = _prefix_top(ordered, [p.good for p in ordered])
    value = top if top > 0 else None
    counts = {len(p.resampled_met) for p in ordered}
    if not ordered or len(counts) != 1 or 0 in counts:
        return Knee(value, None, None, 0)
    import numpy as np

    (resamples,) = counts
    knees = np.asarray(
        [
            _prefix_top(ordered, [p.kept_up and p.resampled_met[b] for p in ordered])
            for b in range(resamples)
        ]
    )
    tail = (1 - confidence) / 2
    low = float(np.quantile(knees, tail, method="lower"))
    high = float(np.quantile(knees, 1 - tail, method="higher"))
    return Knee(value, low, high, resamples)
