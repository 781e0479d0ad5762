"""Token streams timed as they are drained, with the definitions every in-process scenario
shares: TTFT is the time from the call to the first token (prefill included); decode tok/s is
(tokens - 1) / (last token - first token); end to end is the call to the last token."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def decode_rate(stamps: Sequence[float]) -> float:
    """(tokens - 1) / (last - first) for tokens ready at ``stamps`` (NaN under two)."""
    if len(stamps) < 2 or stamps[-1] <= stamps[0]:
        return math.nan
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


@dataclass(frozen=True)
class Stamped:
    """Tokens and when each was ready, in seconds since the call."""

    tokens: tuple[int, ...]
    stamps: tuple[float, ...]

    @property
    def ttft_s(self) -> float:
        return self.stamps[0] if self.stamps else math.nan

    @property
    def e2e_s(self) -> float:
        return self.stamps[-1] if self.stamps else math.nan

    @property
    def decode_tps(self) -> float:
        return decode_rate(self.stamps)


def stamped(steps: Iterable[int]) -> Stamped:
    """Drain ``steps`` (a generator that starts its work when first asked), stamping each."""
    start = time.perf_counter()
    tokens: list[int] = []
    stamps: list[float] = []
    for token in steps:
        stamps.append(time.perf_counter() - start)
        tokens.append(token)
    return Stamped(tuple(tokens), tuple(stamps))
