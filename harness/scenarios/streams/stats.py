"""A load point's figures from its requests: percentiles, throughput, goodput under SLOs.

Definitions (those of vLLM's bench serve, with tokens counted per chunk, not one a chunk):
- TTFT: request sent to the first chunk carrying generated text;
- TPOT (time per output token): (e2e - TTFT) / (output tokens - 1), per request;
- ITL: each token's share of the gap before its chunk (a chunk of k tokens after a gap g
  gives k gaps of g/k), pooled over the point's requests;
- e2e: request sent to the end of its stream;
- request throughput: completed requests / the point's duration; output tokens/s likewise;
- goodput: completed requests meeting every SLO threshold / the point's duration, and the
  share of finished requests (completed or failed) that met them all.

A percentile needs enough values to mean anything: p50 at least 2, p90 10, p99 100 (below that
the p99 is just the largest value); with fewer it is None ("n/a"). Goodput and the SLO verdict
need :data:`MIN_FINISHED` finished requests.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

QUANTILES: tuple[int, ...] = (50, 90, 99)
MIN_FINISHED = 10  # finished requests a point needs for goodput and the SLO verdict
SLO_QUANTILE = 90  # the SLO thresholds are p90s: 90% of finished requests must be within
ERROR_KINDS_KEPT = 5


class SloVerdict(str, Enum):
    MET = "met"  # at least 90% of finished requests within each threshold
    MISSED = "missed"
    INCONCLUSIVE = "inconclusive"  # too few finished requests to judge
    NO_SLO = "no SLO"


@dataclass(frozen=True)
class RequestSample:
    """One finished request: when it was sent (seconds after its point began), its error (one
    line; None when it completed), TTFT, e2e, generated tokens and its per-token gaps."""

    index: int
    start_s: float
    error: str | None
    ttft_s: float | None
    e2e_s: float
    output_tokens: int
    itl_s: tuple[float, ...] = ()
    usage_tokens: int | None = None  # what the server said it generated (usage), if it did
    text_chunks: int = 0  # stream events that carried generated text

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def tpot_s(self) -> float | None:
        if self.ttft_s is None or self.output_tokens < 2:
            return None
        return (self.e2e_s - self.ttft_s) / (self.output_tokens - 1)


@dataclass(frozen=True)
class Slo:
    """Per-request thresholds in seconds (None: not judged)."""

    ttft_s: float | None = None
    tpot_s: float | None = None
    e2e_s: float | None = None

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.ttft_s, self.tpot_s, self.e2e_s))

    def within(self, sample: RequestSample) -> bool:
        """Completed, and within every threshold that is set (a one-token answer has no time
        per output token: it is within any TPOT threshold, as in vLLM's goodput)."""
        if not sample.ok:
            return False
        tpot = sample.tpot_s if sample.tpot_s is not None else 0.0
        pairs = ((self.ttft_s, sample.ttft_s), (self.tpot_s, tpot), (self.e2e_s, sample.e2e_s))
        return all(limit is None or (v is not None and v <= limit) for limit, v in pairs)


def needed_n(quantile: int) -> int:
    """Values a percentile needs to be more than the extreme value: 2 (p50), 10 (p90), 100."""
    return math.ceil(100 / (100 - quantile) - 1e-9)


@dataclass(frozen=True)
class Percentiles:
    """p50/p90/p99 of ``n`` values; a percentile is None when ``n`` is below its need."""

    n: int
    values: tuple[float | None, ...]  # in the order of QUANTILES

    def at(self, quantile: int) -> float | None:
        return self.values[QUANTILES.index(quantile)]


def percentiles(values: Sequence[float]) -> Percentiles:
    """Linear-interpolated percentiles (numpy's default) of the finite ``values``."""
    import numpy as np

    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return Percentiles(0, tuple(None for _ in QUANTILES))
    computed = np.percentile(np.asarray(finite, dtype=float), QUANTILES)
    return Percentiles(
        len(finite),
        tuple(
            float(v) if len(finite) >= needed_n(q) else None
            for q, v in zip(QUANTILES, computed, strict=True)
        ),
    )


@dataclass(frozen=True)
class PointStats:
    sent: int
    completed: int
    errors: int
    cut: int  # in flight at the deadline: cancelled, neither completed nor failed
    duration_s: float
    request_rps: float | None
    output_tps: float | None
    output_tokens: int
    ttft: Percentiles
    tpot: Percentiles
    itl: Percentiles
    e2e: Percentiles
    good: int | None  # completed requests within every SLO (None: no SLO)
    goodput_rps: float | None  # None: no SLO, or too few finished requests
    slo_share: float | None
    slo_verdict: SloVerdict
    error_kinds: tuple[tuple[str, int], ...]  # the most common one-line reasons, with counts

    @property
    def finished(self) -> int:
        return self.completed + self.errors

    @property
    def conclusive(self) -> bool:
        return self.finished >= MIN_FINISHED


def _rate(count: float, duration_s: float) -> float | None:
    return count / duration_s if duration_s > 0 else None


def _verdict(samples: Sequence[RequestSample], slo: Slo) -> SloVerdict:
    if not slo.any:
        return SloVerdict.NO_SLO
    if len(samples) < MIN_FINISHED:
        return SloVerdict.INCONCLUSIVE
    need = SLO_QUANTILE / 100 * len(samples)
    single = (Slo(ttft_s=slo.ttft_s), Slo(tpot_s=slo.tpot_s), Slo(e2e_s=slo.e2e_s))
    for one in single:
        if one.any and sum(one.within(s) for s in samples) < need:
            return SloVerdict.MISSED
    return SloVerdict.MET


def point_stats(
    samples: Sequence[RequestSample], cut: int, duration_s: float, slo: Slo | None = None
) -> PointStats:
    """The figures of a point whose finished requests are ``samples``."""
    slo = slo or Slo()
    done = [s for s in samples if s.ok]
    tokens = sum(s.output_tokens for s in done)
    good = sum(slo.within(s) for s in samples) if slo.any else None
    judged = good is not None and len(samples) >= MIN_FINISHED
    kinds = Counter(s.error for s in samples if s.error is not None)
    return PointStats(
        sent=len(samples) + cut,
        completed=len(done),
        errors=len(samples) - len(done),
        cut=cut,
        duration_s=duration_s,
        request_rps=_rate(len(done), duration_s),
        output_tps=_rate(tokens, duration_s),
        output_tokens=tokens,
        ttft=percentiles([s.ttft_s for s in done if s.ttft_s is not None]),
        tpot=percentiles([t for s in done if (t := s.tpot_s) is not None]),
        itl=percentiles([gap for s in done for gap in s.itl_s]),
        e2e=percentiles([s.e2e_s for s in done]),
        good=good,
        goodput_rps=_rate(good, duration_s) if judged and good is not None else None,
        slo_share=good / len(samples) if judged and good is not None else None,
        slo_verdict=_verdict(samples, slo),
        error_kinds=tuple(kinds.most_common(ERROR_KINDS_KEPT)),
    )
