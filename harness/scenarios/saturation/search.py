"""The knee search: which load point to measure next, and when to stop (pure: no I/O).

Ramp: from ``start``, multiply by ``growth`` while the server keeps up, until a point
over-saturates it (its queue grows: :mod:`harness.scenarios.saturation.oversaturation`), the
ceiling is measured, or (closed loop, whose queue cannot grow) a point misses the SLO. Then
refine: bisect (geometrically; integers for concurrency) between the highest point of the run of
points meeting the SLO from the lowest up and the point above it, or, when the lowest point
missed, step down by ``growth``; at most ``refine`` times. Never more than ``max_points``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum


class StopReason(str, Enum):
    OVERSATURATED = "over-saturated"  # a point's queue grew without bound
    SLO_MISSED = "SLO missed"  # closed loop: a point missed the SLO
    CEILING = "ceiling reached"  # the search's highest point met it
    MAX_POINTS = "max_points reached"
    ALL_FAILED = "every request failed"


@dataclass(frozen=True)
class Reading:
    """What the search needs of a measured point: its value, whether it met the SLO (its
    requests' verdict), and why it over-saturated the server (None: it kept up)."""

    value: float
    met: bool
    oversaturated: str | None = None
    all_failed: bool = False

    @property
    def good(self) -> bool:
        """Met the SLO at a load it can sustain (a growing queue misses it given time)."""
        return self.met and self.oversaturated is None


@dataclass
class KneeSearch:
    start: float
    growth: float
    ceiling: float
    refine: int
    max_points: int
    integer: bool  # concurrency: whole numbers
    floor: float  # the least value a step down may reach
    readings: list[Reading] = field(default_factory=list)
    ramp_stop: StopReason | None = None
    refined: int = 0

    def record(self, reading: Reading) -> None:
        self.readings.append(reading)
        if self.ramp_stop is None:
            self.ramp_stop = self._ramp_stop(reading)
        else:
            self.refined += 1

    def _ramp_stop(self, last: Reading) -> StopReason | None:
        if last.all_failed:
            return StopReason.ALL_FAILED
        if last.oversaturated is not None:
            return StopReason.OVERSATURATED
        if self.integer and not last.met:
            return StopReason.SLO_MISSED
        if last.value >= self.ceiling:
            return StopReason.CEILING
        if len(self.readings) >= self.max_points:
            return StopReason.MAX_POINTS
        return None

    @property
    def stop_reason(self) -> StopReason | None:
        return self.ramp_stop

    def ordered(self) -> list[Reading]:
        return sorted(self.readings, key=lambda r: r.value)

    def next_value(self) -> float | None:
        """The next point to measure; None when the search is over."""
        if not self.readings:
            return self._round(self.start)
        if len(self.readings) >= self.max_points:
            return None
        if self.ramp_stop is None:
            last = self.readings[-1].value
            step = self._round(min(last * self.growth, self.ceiling))
            return max(step, last + 1) if self.integer else step
        if self.ramp_stop is StopReason.ALL_FAILED or self.refined >= self.refine:
            return None
        return self._refinement()

    def _refinement(self) -> float | None:
        ordered = self.ordered()
        measured = {r.value for r in ordered}
        if not ordered[0].good:  # the lowest missed: step down
            lower = self._round(max(ordered[0].value / self.growth, self.floor))
            return lower if lower not in measured and lower < ordered[0].value else None
        last_good = 0
        while last_good + 1 < len(ordered) and ordered[last_good + 1].good:
            last_good += 1
        if last_good + 1 == len(ordered):
            return None  # every point met it: nothing to bisect
        low, high = ordered[last_good].value, ordered[last_good + 1].value
        if self.integer:
            middle = float((int(low) + int(high)) // 2)
        else:
            middle = _two_digits(math.sqrt(low * high))
        return middle if low < middle < high and middle not in measured else None

    def _round(self, value: float) -> float:
        return float(max(1, round(value))) if self.integer else _two_digits(value)


def _two_digits(value: float) -> float:
    """``value`` to 2 significant digits (rates in metric names stay short: 2.8, 11, 0.35)."""
    if value <= 0:
        return value
    digits = 1 - math.floor(math.log10(value))
    return round(value, digits)
