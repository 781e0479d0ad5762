"""Whether an open-loop point over-saturated the server: its queue grew while the point ran.

A server that keeps up has about rate x latency requests in flight (Little's law) whatever the
prompt length: a long prompt makes every TTFT large, not rising. One that does not keep up
queues the arrivals: the requests in flight and the TTFT both climb from the first request to
the last, without bound. So a point is over-saturated when, against send time,

- TTFT rises (Theil-Sen slope, its lower confidence bound above 0) by more than the early
  requests' TTFT (it at least doubled), AND the requests in flight at each send rise likewise
  (by at least :data:`MIN_QUEUE_RISE` and the early count);
- or at least :data:`CUT_SHARE` of the point's requests were still in flight at its bound;
- or at least :data:`FAILED_SHARE` of its finished requests failed (a server that sheds load).

Long contexts keep the search going: a large but flat TTFT is no sign (GuideLLM's fixed-time
stop ends too early there, vllm-project/guidellm#606).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from harness.scenarios.streams.stats import RequestSample

MIN_TREND_POINTS = 8  # requests a trend needs
CONFIDENCE = 0.95  # of the Theil-Sen slope's interval
MIN_QUEUE_RISE = 2.0  # requests in flight: a rise smaller than this is no queue
CUT_SHARE = 0.1
FAILED_SHARE = 0.5


@dataclass(frozen=True)
class Trend:
    """A figure against send time: its early level (median of the first quarter) and the rise
    the Theil-Sen line gives over the sends; ``rising`` when the slope's lower bound is > 0."""

    early: float
    rise: float
    rising: bool

    @property
    def late(self) -> float:
        return self.early + self.rise


def trend(times: Sequence[float], values: Sequence[float]) -> Trend | None:
    """The trend of ``values`` against ``times`` (None: too few points or one send time)."""
    if len(values) < MIN_TREND_POINTS or len(set(times)) < 2:
        return None
    from scipy.stats import theilslopes

    order = sorted(range(len(times)), key=lambda i: times[i])
    xs = [times[i] for i in order]
    ys = [values[i] for i in order]
    slope, _, low, _ = theilslopes(ys, xs, alpha=CONFIDENCE)
    quarter = max(3, len(ys) // 4)
    return Trend(statistics.median(ys[:quarter]), float(slope) * (xs[-1] - xs[0]), low > 0)


def in_flight_at_sends(samples: Sequence[RequestSample]) -> list[int]:
    """For each finished request, how many others were in flight when it was sent (sent
    before it, not yet ended)."""
    import numpy as np

    starts = np.asarray([s.start_s for s in samples], dtype=float)
    ends = starts + np.asarray([s.e2e_s for s in samples], dtype=float)
    flying = (starts[None, :] <= starts[:, None]) & (ends[None, :] > starts[:, None])
    np.fill_diagonal(flying, False)
    return [int(n) for n in flying.sum(axis=1)]


def oversaturated(samples: Sequence[RequestSample], cut: int, open_loop: bool) -> str | None:
    """Why the point over-saturated the server, in one line; None when it kept up (or there
    is too little to tell)."""
    sent = len(samples) + cut
    if sent and cut / sent >= CUT_SHARE:
        return f"{cut} of {sent} requests still in flight at the point's bound"
    failed = sum(1 for s in samples if not s.ok)
    if samples and failed / len(samples) >= FAILED_SHARE:
        return f"{failed} of {len(samples)} finished requests failed"
    if not open_loop:
        return None  # a closed loop's queue is its concurrency: it cannot grow
    done = [s for s in samples if s.ok and s.ttft_s is not None]
    ttft = trend([s.start_s for s in done], [s.ttft_s or 0.0 for s in done])
    queue = trend([s.start_s for s in samples], [float(n) for n in in_flight_at_sends(samples)])
    if ttft is None or queue is None:
        return None
    ttft_grew = ttft.rising and ttft.rise > ttft.early
    queue_grew = queue.rising and queue.rise >= max(MIN_QUEUE_RISE, queue.early)
    if ttft_grew and queue_grew:
        return (
            f"queue growing: TTFT {ttft.early:.3g} → {ttft.late:.3g} s and requests in flight "
            f"{queue.early:.3g} → {queue.late:.3g} over the point"
        )
    return None
