"""One summary of a metric's samples, the only one: what gates, the judge, compare and the
report all show and decide on.

:class:`Summary` is taken over the finite samples only; a NaN or infinite sample (a run that
measured nothing) is dropped and counted, never allowed to poison the median. Samples
(10, 11, NaN, 12, 13) summarise as the median 11.5 of 4, 1 sample dropped, everywhere.

The 95% interval of the median is distribution-free, from order statistics
(:func:`median_ci`); with fewer than 6 samples no such interval reaches 95%, and the interval
is the samples' range instead (wider, and it covers the median less often).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property


def median_ci(samples: Iterable[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """Distribution-free confidence interval of the median from order statistics.

    The interval ``[x_(k), x_(n-k+1)]`` of the sorted samples covers the median with probability
    ``1 - 2 P(Binomial(n, 1/2) <= k - 1)``; ``k`` is the largest that keeps this at least
    ``confidence``. None when no interval can reach it (at 95%: fewer than 6 samples)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    ordered = sorted(samples)
    n = len(ordered)
    tail = (1 - confidence) / 2
    cumulative, k = 0.0, 0
    while k < n // 2:
        cumulative += math.comb(n, k) / 2**n  # P(B = k), summed: P(B <= k)
        if cumulative > tail:
            break
        k += 1
    if k == 0:
        return None
    return (ordered[k - 1], ordered[n - k])


@dataclass(frozen=True)
class Summary:
    """Median, spread, 95% interval of the median and n over the finite samples, with the
    count of samples dropped for being NaN or infinite. Build it with :meth:`of`."""

    finite: tuple[float, ...]  # the finite samples, sorted
    dropped: int  # samples that were NaN or infinite

    @classmethod
    def of(cls, samples: Iterable[float]) -> Summary:
        values = list(samples)
        finite = tuple(sorted(s for s in values if math.isfinite(s)))
        return cls(finite, len(values) - len(finite))

    @property
    def n(self) -> int:
        """How many samples the summary is over (the finite ones)."""
        return len(self.finite)

    @property
    def median(self) -> float:
        """The median of the finite samples; NaN when there is none."""
        return statistics.median(self.finite) if self.finite else math.nan

    @property
    def stddev(self) -> float:
        """Sample standard deviation of the finite samples (0 for one; NaN for none)."""
        if not self.finite:
            return math.nan
        return statistics.stdev(self.finite) if len(self.finite) > 1 else 0.0

    @cached_property
    def interval(self) -> tuple[float, float]:
        """The 95% interval of the median (:func:`median_ci`), or the samples' range when there
        are too few for one (fewer than 6; one sample: the point); (NaN, NaN) for none."""
        if not self.finite:
            return (math.nan, math.nan)
        return median_ci(self.finite) or (self.finite[0], self.finite[-1])

    @property
    def exact_interval(self) -> bool:
        """Whether :attr:`interval` reaches 95% (6 samples or more), not just the range."""
        return self.n >= 6

    def counted(self) -> str:
        """``median of 4, 1 sample dropped``: what the median is over, for a message."""
        text = f"median of {self.n}"
        if self.dropped:
            text += f", {self.dropped} sample{'s' if self.dropped != 1 else ''} dropped"
        return text

    def dropped_note(self) -> str:
        """``1 sample dropped (NaN or infinite)``, or empty when none was."""
        if not self.dropped:
            return ""
        plural = "s" if self.dropped != 1 else ""
        return f"{self.dropped} sample{plural} dropped (NaN or infinite)"
