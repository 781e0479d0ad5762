"""How long running streams stalled when a long prompt arrived (pure: from arrival times).

Every stream's tokens are placed on one clock (seconds after the case began). The baseline is
the median inter-token latency (ITL: each token's share of the gap before its chunk, as the
serving scenario counts it) of the gaps that ended before the long prompt was sent. The window
is from its sending to its first token (its prefill). In the window:

- max ITL and, with 100 values or more, p99 ITL of the gaps that overlap it;
- the stall: max ITL less the baseline;
- tokens lost: what the streams running then would have produced at the baseline ITL (no
  more than each had left to make), less what they did (never below 0).

A stall is named when the max ITL is at least ``factor`` times the baseline and at least
``min_stall_s``: one line says how long the streams stopped and what arrived.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from harness.scenarios.streams.stats import needed_n

TIMELINE_KEPT = 4000  # (time, ITL) points the artifacts keep for the chart


@dataclass(frozen=True)
class StreamTokens:
    """One running stream: when each chunk carrying tokens arrived (seconds after the case
    began, ascending) and how many tokens it carried."""

    times_s: tuple[float, ...]
    tokens: tuple[int, ...]

    def gaps(self) -> list[tuple[float, float, float]]:
        """(gap start, gap end, ITL) per token after the first chunk."""
        out = []
        carrying = [(t, k) for t, k in zip(self.times_s, self.tokens, strict=True) if k > 0]
        for (before, _), (t, k) in itertools.pairwise(carrying):
            out.extend([(before, t, (t - before) / k)] * k)
        return out


@dataclass(frozen=True)
class Stall:
    baseline_itl_s: float | None
    window_s: float  # the long prompt's sending to its first token
    max_itl_s: float | None
    p99_itl_s: float | None
    stall_s: float | None
    tokens_lost: int | None
    running: int  # streams that had started and had tokens left at the arrival
    stalled: bool


def stall(
    streams: Sequence[StreamTokens],
    arrival_s: float,
    window_end_s: float,
    factor: float,
    min_stall_s: float,
) -> Stall:
    gaps = [g for s in streams for g in s.gaps()]
    before = [itl for _, end, itl in gaps if end <= arrival_s]
    baseline = statistics.median(before) if before else None
    inside = [itl for start, end, itl in gaps if end > arrival_s and start < window_end_s]
    window = max(window_end_s - arrival_s, 0.0)
    running = [s for s in streams if s.times_s and s.times_s[0] <= arrival_s < s.times_s[-1]]
    most = max(inside) if inside else None
    p99 = None
    if len(inside) >= needed_n(99):
        import numpy as np

        p99 = float(np.percentile(inside, 99))
    lost = None
    if baseline and baseline > 0:
        lost = sum(_lost(s, arrival_s, window_end_s, baseline) for s in running)
    extra = most - baseline if most is not None and baseline is not None else None
    stalled = (
        most is not None
        and baseline is not None
        and most >= factor * baseline
        and most >= min_stall_s
    )
    return Stall(baseline, window, most, p99, extra, lost, len(running), stalled)


def _lost(stream: StreamTokens, arrival_s: float, window_end_s: float, baseline_s: float) -> int:
    """What ``stream`` would have made in the window at the baseline ITL (no more than it had
    left to make at the arrival), less what it made."""
    pairs = list(zip(stream.times_s, stream.tokens, strict=True))
    left = sum(k for t, k in pairs if t > arrival_s)
    made = sum(k for t, k in pairs if arrival_s < t <= window_end_s)
    expected = min((window_end_s - arrival_s) / baseline_s, left)
    return max(0, round(expected - made))


def finding(result: Stall, long_tokens: int, streams: int) -> str:
    """The one line that names the stall (or says there was none)."""
    arrived = f"a {long_tokens}-token prompt arrived ({result.window_s:.3g} s to its first token)"
    if result.max_itl_s is None or result.baseline_itl_s is None:
        return f"not judged: no gaps around the arrival while {arrived}"
    if result.stalled:
        lost = f"; about {result.tokens_lost} tokens lost" if result.tokens_lost else ""
        return (
            f"stall: {streams} running streams stopped {result.max_itl_s:.3g} s (max ITL, "
            f"{result.max_itl_s / result.baseline_itl_s:.0f}x the {result.baseline_itl_s:.3g} s "
            f"baseline) when {arrived}{lost}"
        )
    return (
        f"no stall: max ITL {result.max_itl_s:.3g} s "
        f"({result.max_itl_s / result.baseline_itl_s:.1f}x the {result.baseline_itl_s:.3g} s "
        f"baseline) when {arrived}"
    )


def timeline(
    streams: Sequence[StreamTokens], arrival_s: float, window_end_s: float, margin_s: float
) -> list[list[list[float]]]:
    """Per stream, [time after the arrival, ITL] of each gap ending within ``margin_s`` of the
    window (at most :data:`TIMELINE_KEPT` in all), for the chart."""
    keep = TIMELINE_KEPT // max(len(streams), 1)
    out = []
    for s in streams:
        points = [
            [round(end - arrival_s, 6), round(itl, 6)]
            for _, end, itl in s.gaps()
            if arrival_s - margin_s <= end <= window_end_s + margin_s
        ]
        seen = sorted({(p[0], p[1]) for p in points})
        out.append([list(p) for p in seen][:keep])
    return out
