"""The one rule for compare and relative gates (:func:`decide`): at its boundaries. A change at
exactly the minimum effect, a baseline below zero, samples in another order, too few samples
for a timing or for a count, identical samples."""

from __future__ import annotations

import math

import pytest

from harness.core.types import Unit, Verdict
from harness.results.significance import decide, relative_change

BASE = (100.0, 101.0, 99.0, 100.5, 99.5)


def _shift(samples: tuple[float, ...], factor: float) -> tuple[float, ...]:
    return tuple(s * factor for s in samples)


# (baseline, current, unit, higher is better, effect, verdict, note fragment)
TABLE = [
    (BASE, BASE, Unit.TOKENS_PER_SECOND, True, 0.03, Verdict.UNCHANGED, "identical"),
    (BASE, _shift(BASE, 0.5), Unit.TOKENS_PER_SECOND, True, 0.03, Verdict.REGRESSED, "p="),
    (BASE, _shift(BASE, 1.5), Unit.TOKENS_PER_SECOND, True, 0.03, Verdict.IMPROVED, "p="),
    (BASE, _shift(BASE, 1.5), Unit.SECONDS, False, 0.03, Verdict.REGRESSED, "p="),  # slower
    # a change of exactly the minimum effect counts as one (not "under" it)
    (BASE, _shift(BASE, 0.97), Unit.TOKENS_PER_SECOND, True, 0.03, Verdict.REGRESSED, "p="),
    (BASE, _shift(BASE, 0.98), Unit.TOKENS_PER_SECOND, True, 0.03, Verdict.UNCHANGED, "under"),
    # 3 a side: a timing is never judged, whatever the change
    (BASE[:3], _shift(BASE[:3], 0.1), Unit.SECONDS, False, 0.03, Verdict.INCONCLUSIVE, "n >= 4"),
    # a count on one sample: by its size (under the effect, 10% or more, in between)
    ((1000.0,), (1010.0,), Unit.BYTES, False, 0.03, Verdict.UNCHANGED, "under the 3%"),
    ((1000.0,), (1200.0,), Unit.BYTES, False, 0.03, Verdict.REGRESSED, "moved 10%"),
    # recorded once a case: no "needs n >= 4" (repeats add no samples), judged by size only
    ((1000.0,), (1050.0,), Unit.BYTES, False, 0.03, Verdict.INCONCLUSIVE, "recorded once a case"),
    ((1000.0, 1000), (1050.0, 1050), Unit.BYTES, False, 0.03, Verdict.INCONCLUSIVE, "n >= 4"),
    ((), BASE, Unit.SECONDS, False, 0.03, Verdict.INCONCLUSIVE, "no samples"),
]


@pytest.mark.parametrize(("base", "cur", "unit", "higher", "effect", "verdict", "note"), TABLE)
def test_decide(base, cur, unit, higher, effect, verdict, note) -> None:  # type: ignore[no-untyped-def]
    got = decide(base, cur, unit=unit, higher_is_better=higher, effect=effect)
    assert got.verdict is verdict, got
    assert note in got.note, got


def test_the_same_samples_in_another_order_decide_the_same() -> None:
    cur = _shift(BASE, 0.9)
    one = decide(BASE, cur, unit=Unit.SECONDS, higher_is_better=False, effect=0.03)
    other = decide(
        tuple(reversed(BASE)),
        tuple(sorted(cur)),
        unit=Unit.SECONDS,
        higher_is_better=False,
        effect=0.03,
    )
    assert one == other


@pytest.mark.parametrize(
    ("baseline", "current", "change"),
    [
        (100.0, 90.0, -0.1),
        (-100.0, -90.0, 0.1),  # below zero: the change is relative to |baseline|
        (-100.0, -110.0, -0.1),
        (0.0, 0.0, 0.0),
        (0.0, 5.0, math.inf),
        (0.0, -5.0, -math.inf),
    ],
)
def test_relative_change(baseline: float, current: float, change: float) -> None:
    assert relative_change(baseline, current) == pytest.approx(change)


def test_a_negative_baseline_moves_the_right_way() -> None:
    """A metric below zero (a log-probability, higher is better) that rises is an improvement."""
    base = (-2.0, -2.01, -1.99, -2.02, -1.98)
    got = decide(base, _shift(base, 0.5), unit=Unit.RATIO, higher_is_better=True, effect=0.03)
    assert got.change > 0 and got.verdict is Verdict.IMPROVED


@pytest.mark.parametrize(
    ("current", "verdict", "needed"),
    [
        ((98.0,), Verdict.UNCHANGED, None),
        ((80.0,), Verdict.REGRESSED, None),  # a value derived once: by its size
        ((95.0,), Verdict.INCONCLUSIVE, None),  # in between: no repeats would decide it
    ],
)
def test_a_value_derived_once_a_case_is_judged_by_size_not_by_repeats(
    current: tuple[float, ...], verdict: Verdict, needed: int | None
) -> None:
    got = decide(
        (100.0,),
        current,
        unit=Unit.TOKENS_PER_SECOND,
        higher_is_better=True,
        effect=0.03,
        once_a_case=True,
    )
    assert got.verdict is verdict and got.needed_n is needed, got
    timed = decide(
        (100.0,), current, unit=Unit.TOKENS_PER_SECOND, higher_is_better=True, effect=0.03
    )
    assert timed.verdict is Verdict.INCONCLUSIVE and timed.needed_n == 4  # a timing: repeats


@pytest.mark.parametrize(
    ("base", "cur", "unit", "verdict", "change", "needed"),
    [
        # a not-a-number sample: nothing to compare, said so
        ((float("nan"),), (1.0,), Unit.SECONDS, Verdict.INCONCLUSIVE, None, None),
        # 0.5 ms apart in seconds is scheduler jitter, however large relatively (5%)
        (
            (0.0100,) * 5,
            (0.0105,) * 4 + (0.0106,),
            Unit.SECONDS,
            Verdict.UNCHANGED,
            0.05,
            None,
        ),
        # the same 5% in tokens per second is a change
        (
            (100.0,) * 5,
            (105.0,) * 4 + (106.0,),
            Unit.TOKENS_PER_SECOND,
            Verdict.IMPROVED,
            0.05,
            None,
        ),
        # a count that moved exactly 10%: a verdict by size
        ((1000.0,), (1100.0,), Unit.BYTES, Verdict.REGRESSED, 0.1, None),
        # a count in between with 2 samples a side: repeats would decide (4 a side)
        ((1000.0, 1000.0), (1050.0, 1050.0), Unit.BYTES, Verdict.INCONCLUSIVE, 0.05, 4),
        ((100.0,) * 3, (50.0,) * 3, Unit.SECONDS, Verdict.INCONCLUSIVE, -0.5, 4),
    ],
)
def test_the_decision_carries_its_change_and_what_would_decide(
    base: tuple[float, ...],
    cur: tuple[float, ...],
    unit: Unit,
    verdict: Verdict,
    change: float | None,
    needed: int | None,
) -> None:
    higher = unit is Unit.TOKENS_PER_SECOND
    got = decide(base, cur, unit=unit, higher_is_better=higher, effect=0.03)
    assert got.verdict is verdict, got
    if change is None:
        assert math.isnan(got.change) and got.note == "not a number: nothing to compare"
    else:
        assert got.change == pytest.approx(change)
    assert got.needed_n == needed


@pytest.mark.parametrize(
    ("base", "cur", "once", "verdict", "change"),
    [
        ((1000.0,), (1010.0,), False, Verdict.UNCHANGED, 0.01),  # a count under the effect
        ((100.0,), (95.0,), True, Verdict.INCONCLUSIVE, -0.05),  # derived once, in between
    ],
)
def test_a_decision_without_a_test_still_carries_its_change(
    base: tuple[float, ...], cur: tuple[float, ...], once: bool, verdict: Verdict, change: float
) -> None:
    unit = Unit.TOKENS_PER_SECOND if once else Unit.BYTES
    got = decide(base, cur, unit=unit, higher_is_better=once, effect=0.03, once_a_case=once)
    assert got.verdict is verdict and got.change == pytest.approx(change) and got.p_value is None


def test_a_tested_change_under_the_effect_carries_its_p() -> None:
    base = (100.0, 101.0, 99.0, 100.5, 99.5)
    got = decide(base, _shift(base, 0.99), unit=Unit.SECONDS, higher_is_better=False, effect=0.03)
    assert got.verdict is Verdict.UNCHANGED and got.p_value is not None and 0 < got.p_value <= 1


@pytest.mark.parametrize(("baseline", "current"), [(math.nan, 1.0), (1.0, math.nan)])
def test_a_change_from_or_to_nan_is_nan(baseline: float, current: float) -> None:
    assert math.isnan(relative_change(baseline, current))


def test_no_samples_and_identical_samples_say_so() -> None:
    empty = decide((), (1.0,), unit=Unit.SECONDS, higher_is_better=False, effect=0.03)
    assert math.isnan(empty.change) and empty.note == "no samples to compare"
    same = decide((2.0, 1.0), (1.0, 2.0), unit=Unit.SECONDS, higher_is_better=False, effect=0.03)
    assert (
        same.verdict is Verdict.UNCHANGED and same.change == 0 and same.note == "identical samples"
    )
