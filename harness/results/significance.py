"""What two sets of raw samples can say about a change: one rule for compare and relative gates.

A change is ``regressed`` or ``improved`` only when it is at least the minimum effect and the
Mann-Whitney U test finds it significant at alpha. When the sample sizes cannot reach
significance at all (3 vs 3: the smallest p is 0.1), the answer is ``inconclusive`` with the
sample count that would be needed, never ``unchanged``. A change at least as large as the
minimum effect that the test does not find significant is ``inconclusive`` too (with its p),
never ``unchanged``. ``unchanged`` needs samples that could have shown a change, or identical
samples: a tested change under the minimum effect, or a significant one in seconds smaller than
the timer's jitter (:data:`TIMER_JITTER_S`).

Timings (seconds, tokens per second, and ratios, which are mostly ratios of timings) vary from
run to run, so without enough samples they are never judged. Counted quantities (bytes, counts,
tokens: ``memory.*``, weight bytes) come from the work, not from a clock; a case records many of
them once (one sample a side), where no test is possible. For those: a change under the minimum
effect is ``unchanged``, one of :data:`LARGE_CHANGE` or more is a verdict by its size alone, and
anything in between is ``inconclusive``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from harness.core.types import Unit, Verdict
from harness.results.stats import can_reach, mann_whitney_u, needed_n

ALPHA = 0.05  # significance level of the Mann-Whitney U test, two-sided
TIMED_UNITS = frozenset(
    {Unit.SECONDS, Unit.TOKENS_PER_SECOND, Unit.REQUESTS_PER_SECOND, Unit.RATIO}
)
LARGE_CHANGE = 0.10  # a counted quantity that moved this much is a verdict without a test
TIMER_JITTER_S = 0.001  # differences in seconds below this are scheduler noise, never a verdict


@dataclass(frozen=True)
class Decision:
    verdict: Verdict  # IMPROVED, REGRESSED, UNCHANGED or INCONCLUSIVE
    change: float  # (current - baseline) / |baseline| of the medians; +-inf from a 0 baseline
    p_value: float | None  # None when no test was possible
    note: str  # why, for people: "needs n >= 4 a side", "p=0.2, not significant at alpha 0.05"
    needed_n: int | None = None  # samples a side that would let the test decide, when too few

    @property
    def label(self) -> str:
        """``inconclusive (needs n >= 4 a side)``, ``regressed (p=0.0079, ...)``."""
        return f"{self.verdict.value} ({self.note})" if self.note else self.verdict.value


def relative_change(baseline: float, current: float) -> float:
    """(current - baseline) / |baseline|; 0 when both are 0, +-inf from a baseline of 0."""
    if math.isnan(baseline) or math.isnan(current):
        return math.nan
    if baseline == 0:
        return 0.0 if current == 0 else math.copysign(math.inf, current)
    return (current - baseline) / abs(baseline)


def too_few_note(alpha: float) -> str:
    """``needs n >= 4 a side``: the samples a side that can show a change at ``alpha``."""
    return f"needs n >= {needed_n(alpha)} a side"


def decide(
    baseline: Sequence[float],
    current: Sequence[float],
    *,
    unit: Unit,
    higher_is_better: bool,
    effect: float,
    alpha: float = ALPHA,
    once_a_case: bool = False,
) -> Decision:
    """Judge the change from ``baseline`` to ``current`` samples against ``effect`` (a relative
    change, e.g. 0.03) at significance ``alpha``. ``once_a_case``: a value derived once a case
    (whatever its unit), judged by its size as a count is, since repeats add no samples."""
    n1, n2 = len(baseline), len(current)
    if n1 == 0 or n2 == 0:
        return Decision(Verdict.INCONCLUSIVE, math.nan, None, "no samples to compare")
    b, c = statistics.median(baseline), statistics.median(current)
    change = relative_change(b, c)
    if math.isnan(change):
        return Decision(Verdict.INCONCLUSIVE, change, None, "not a number: nothing to compare")
    if sorted(baseline) == sorted(current):
        return Decision(Verdict.UNCHANGED, change, None, "identical samples")
    better = change > 0 if higher_is_better else change < 0
    moved = Verdict.IMPROVED if better else Verdict.REGRESSED
    under_effect = abs(change) < effect
    jitter = unit is Unit.SECONDS and abs(c - b) < TIMER_JITTER_S
    small = under_effect or jitter
    apart_ms, jitter_ms = abs(c - b) * 1000, TIMER_JITTER_S * 1000
    why_small = (
        f"under the {effect:.0%} minimum effect"
        if under_effect
        else f"{apart_ms:.2g} ms apart, under the {jitter_ms:g} ms timer jitter"
    )
    if not can_reach(n1, n2, alpha):
        needed = needed_n(alpha)
        if unit in TIMED_UNITS and not once_a_case:
            return Decision(Verdict.INCONCLUSIVE, change, None, too_few_note(alpha), needed)
        large = max(LARGE_CHANGE, effect)
        if small:
            note = f"a count {why_small} (too few samples for a test)"
            return Decision(Verdict.UNCHANGED, change, None, note)
        if abs(change) >= large:
            note = f"a count that moved {large:.0%} or more (too few samples for a test)"
            return Decision(moved, change, None, note)
        if once_a_case or max(n1, n2) == 1:  # recorded once a case: repeats add nothing
            note = f"recorded once a case, judged by its size only outside {effect:.0%}-"
            note += f"{large:.0%}"
            return Decision(Verdict.INCONCLUSIVE, change, None, note)
        note = f"{too_few_note(alpha)}; a count is judged without a test only outside "
        note += f"{effect:.0%}-{large:.0%}"
        return Decision(Verdict.INCONCLUSIVE, change, None, note, needed)
    p_value = mann_whitney_u(baseline, current)
    significant = p_value < alpha
    if under_effect or (jitter and significant):
        return Decision(Verdict.UNCHANGED, change, p_value, f"p={p_value:.3g}, {why_small}")
    if significant:
        return Decision(moved, change, p_value, f"p={p_value:.3g}, minimum effect {effect:.0%}")
    # over the minimum effect and not significant: the samples cannot tell, even where the
    # difference is under the timer's jitter (it is not shown to be noise either)
    note = f"p={p_value:.3g}, not significant at alpha {alpha:g}"
    if jitter:
        note += f"; {why_small}"
    return Decision(Verdict.INCONCLUSIVE, change, p_value, note)
