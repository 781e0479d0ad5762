"""The points of a load sweep and when their requests are sent.

A point is closed-loop (``concurrency`` N: N workers, each sending its next request when its
last one ends) or open-loop (``rate`` R requests/s: arrivals drawn from a gamma distribution of
inter-arrival times with mean 1/R; burstiness 1 makes it exponential, i.e. Poisson arrivals, as
vLLM's bench serve does). Open-loop schedules are drawn with numpy from a seed, so a point sends
its requests at the same offsets every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

MAX_RATE = 1000.0  # requests/s; above it a schedule is a burst, and the key would need an exponent
MIN_RATE = 0.01


class LoopKind(str, Enum):
    CLOSED = "concurrency"  # N requests in flight, the next sent when one ends
    OPEN = "rate"  # requests sent at drawn times, whatever is in flight


@dataclass(frozen=True)
class LoadPoint:
    """One point of a sweep: ``value`` is the concurrency (closed) or requests/s (open)."""

    kind: LoopKind
    value: float

    @property
    def key(self) -> str:
        """The point in metric names: ``c4`` (concurrency 4), ``r0_5`` (0.5 requests/s)."""
        if self.kind is LoopKind.CLOSED:
            return f"c{int(self.value)}"
        return "r" + f"{self.value:g}".replace(".", "_")

    @property
    def label(self) -> str:
        """For people: ``concurrency 4``, ``0.5 req/s``."""
        if self.kind is LoopKind.CLOSED:
            return f"concurrency {int(self.value)}"
        return f"{self.value:g} req/s"


def closed(concurrency: int) -> LoadPoint:
    return LoadPoint(LoopKind.CLOSED, float(concurrency))


def open_rate(rate: float) -> LoadPoint:
    return LoadPoint(LoopKind.OPEN, float(rate))


def arrival_offsets(rate: float, count: int, seed: int, burstiness: float = 1.0) -> list[float]:
    """Send times (seconds after the point starts) of ``count`` requests at ``rate`` requests/s:
    cumulative gamma inter-arrival gaps of shape ``burstiness`` and mean ``1 / rate`` (shape 1:
    a Poisson process; below 1 burstier, above 1 more regular). The first request waits its gap
    too, as a Poisson process's first arrival does."""
    if rate <= 0 or burstiness <= 0:
        raise ValueError("rate and burstiness must be positive")
    if count <= 0:
        return []
    import numpy as np

    rng = np.random.default_rng(seed)
    gaps = rng.gamma(shape=burstiness, scale=1.0 / (rate * burstiness), size=count)
    return [float(t) for t in np.cumsum(gaps)]
