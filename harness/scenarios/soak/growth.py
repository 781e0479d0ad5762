"""A soak's verdicts from its samples: the server's memory growth per request with its 95%
interval (Theil-Sen, scipy's ``theilslopes``: robust to the steps an allocator takes), judged
against a bound per 1,000 requests; and the drift of the latency percentiles from the first
window of requests to the last.

The growth is fitted on the samples taken after the first ``settle_share`` of the requests
(caches and allocators fill at the start; that is not a leak). Its verdict says what the
interval supports: growth beyond the bound when the whole interval is above it, within it when
the whole interval is at or below it, inconclusive when it straddles the bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from harness.scenarios.streams.stats import QUANTILES, percentiles

MIB = 1 << 20
MIN_SAMPLES = 4  # memory samples a fit needs (after the settle share), at 2 request counts or more
CONFIDENCE = 0.95


class GrowthVerdict(str, Enum):
    WITHIN = "within"
    BEYOND = "beyond"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Growth:
    """Bytes per request (Theil-Sen slope) with its 95% interval, fitted on ``samples`` memory
    readings taken from request ``from_request`` to ``to_request``."""

    bytes_per_request: float
    low: float
    high: float
    samples: int
    from_request: int
    to_request: int

    def per_1000_mib(self, value: float) -> float:
        return value * 1000 / MIB

    def verdict(self, bound_bytes_per_request: float) -> GrowthVerdict:
        if self.low > bound_bytes_per_request:
            return GrowthVerdict.BEYOND
        if self.high <= bound_bytes_per_request:
            return GrowthVerdict.WITHIN
        return GrowthVerdict.INCONCLUSIVE


def fit_growth(
    requests: Sequence[int], memory_bytes: Sequence[int], from_request: int
) -> Growth | None:
    """The growth of ``memory_bytes`` against ``requests`` (finished when each was read), from
    ``from_request`` on; None with too few samples or fewer than two request counts."""
    pairs = [(x, y) for x, y in zip(requests, memory_bytes, strict=True) if x >= from_request]
    if len(pairs) < MIN_SAMPLES or len({x for x, _ in pairs}) < 2:
        return None
    from scipy.stats import theilslopes

    xs = [float(x) for x, _ in pairs]
    ys = [float(y) for _, y in pairs]
    slope, _, low, high = theilslopes(ys, xs, alpha=CONFIDENCE)
    return Growth(float(slope), float(low), float(high), len(pairs), int(min(xs)), int(max(xs)))


@dataclass(frozen=True)
class Window:
    """One window of requests (in the order they were sent): its e2e and TTFT percentiles."""

    first: int
    last: int
    e2e: tuple[float | None, ...]  # p50, p90, p99 (None: too few requests for it)
    ttft: tuple[float | None, ...]


def windows(
    e2e_s: Sequence[float | None], ttft_s: Sequence[float | None], count: int
) -> list[Window]:
    """``count`` windows of about equal numbers of requests (``e2e_s[i]``: request i's, None
    when it failed)."""
    n = len(e2e_s)
    out = []
    for w in range(count):
        lo, hi = n * w // count, n * (w + 1) // count
        if hi <= lo:
            continue
        e2e = percentiles([v for v in e2e_s[lo:hi] if v is not None]).values
        ttft = percentiles([v for v in ttft_s[lo:hi] if v is not None]).values
        out.append(Window(lo, hi - 1, e2e, ttft))
    return out


@dataclass(frozen=True)
class Drift:
    """The last window's e2e percentile over the first's, at the highest quantile both have."""

    quantile: int
    first_s: float
    last_s: float

    @property
    def ratio(self) -> float:
        return self.last_s / self.first_s if self.first_s > 0 else float("inf")


def latency_drift(found: Sequence[Window]) -> Drift | None:
    if len(found) < 2:
        return None
    first, last = found[0], found[-1]
    for q in reversed(QUANTILES):
        i = QUANTILES.index(q)
        a, b = first.e2e[i], last.e2e[i]
        if a is not None and b is not None:
            return Drift(q, a, b)
    return None
