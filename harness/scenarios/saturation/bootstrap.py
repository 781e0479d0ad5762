"""How sure a load point's SLO verdict is: the point's finished requests resampled with
replacement (a percentile bootstrap, numpy, seeded), each resample judged by the very rule of
:func:`harness.scenarios.streams.stats.point_stats` (at least 90% of finished requests within
each threshold), and each threshold's p90 given its interval.

A request that failed is within no threshold; a one-token answer has no TPOT and is within any
TPOT threshold (as :meth:`harness.scenarios.streams.stats.Slo.within` says).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.scenarios.streams.stats import SLO_QUANTILE, RequestSample, Slo

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

KINDS = ("ttft", "tpot", "e2e")  # the thresholds an SLO may set, in Slo's order


@dataclass(frozen=True)
class Interval:
    """A bootstrap interval of a p90 (seconds), at the run's confidence."""

    low: float
    high: float


@dataclass(frozen=True)
class PointBootstrap:
    """One point's resamples: whether each met the SLO, and each set threshold's p90 interval
    over the completed requests (None: fewer than 10 of them, too few for a p90)."""

    met: tuple[bool, ...]  # one per resample
    p90: dict[str, Interval | None]

    @property
    def met_share(self) -> float:
        """The share of resamples that met the SLO (0 when there are none)."""
        return sum(self.met) / len(self.met) if self.met else 0.0


def _limits(slo: Slo) -> dict[str, float | None]:
    return {"ttft": slo.ttft_s, "tpot": slo.tpot_s, "e2e": slo.e2e_s}


def _values(samples: Sequence[RequestSample], kind: str) -> list[float]:
    """Each finished request's figure (NaN when it has none: a failed request)."""
    out = []
    for s in samples:
        value = {"ttft": s.ttft_s, "tpot": s.tpot_s, "e2e": s.e2e_s}[kind]
        if kind == "tpot" and value is None and s.ok:
            value = 0.0  # one token: within any TPOT threshold
        out.append(math.nan if value is None or not s.ok else value)
    return out


def _interval(values: npt.NDArray[np.float64], confidence: float) -> Interval:
    import numpy as np

    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(float(low), float(high))


def point_bootstrap(
    samples: Sequence[RequestSample],
    slo: Slo,
    resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> PointBootstrap:
    """Resample ``samples`` ``resamples`` times; with fewer than 10 finished requests no
    resample is judged (``met`` empty), as the point itself is not."""
    import numpy as np

    n = len(samples)
    limits = _limits(slo)
    set_kinds = [k for k in KINDS if limits[k] is not None]
    if n < 10 or not set_kinds:
        return PointBootstrap((), {k: None for k in set_kinds})
    picks = rng.integers(0, n, size=(resamples, n))
    met = np.ones(resamples, dtype=bool)
    p90: dict[str, Interval | None] = {}
    for kind in set_kinds:
        values = np.asarray(_values(samples, kind), dtype=float)
        limit = limits[kind]
        assert limit is not None
        within = np.nan_to_num(values, nan=math.inf) <= limit
        met &= within[picks].mean(axis=1) >= SLO_QUANTILE / 100 - 1e-12
        done = values[~np.isnan(values)]
        if len(done) >= 10:
            again = done[rng.integers(0, len(done), size=(resamples, len(done)))]
            p90[kind] = _interval(np.percentile(again, SLO_QUANTILE, axis=1), confidence)
        else:
            p90[kind] = None
    return PointBootstrap(tuple(bool(m) for m in met), p90)
