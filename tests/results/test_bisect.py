"""The bisection itself over synthetic measurements: the first bad version, status changes,
re-measuring an inconclusive step, and saying so when it stays inconclusive."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.results.bisect import BisectError, Measurement, MeasurePair, bisect, evidence_lines

SPEC = MetricSpec("throughput.decode_tps", Unit.TOKENS_PER_SECOND, True, "tok/s")
VERSIONS = [f"1.{i}" for i in range(10)]
FAST = (100.0, 101.0, 99.0, 100.5, 99.5)
SLOW = (50.0, 51.0, 49.0, 50.5, 49.5)
NOISY = (20.0, 180.0, 60.0, 140.0, 90.0)  # 10% lower median, spread too wide to decide


def _by_version(rule: Callable[[str], Measurement]) -> tuple[MeasurePair, Counter[str]]:
    """Both sides of a step measured by ``rule``; ``calls`` counts each version's runs."""
    calls: Counter[str] = Counter()

    def measure(good: str, version: str) -> tuple[Measurement, Measurement]:
        calls[good] += 1
        calls[version] += 1
        return rule(good), rule(version)

    return measure, calls


def _slow_from(first: str) -> Callable[[str], Measurement]:
    return lambda v: Measurement(v, True, "passed", samples=SLOW if v >= first else FAST)


def _fails_from(first: str) -> Callable[[str], Measurement]:
    return lambda v: (
        Measurement(v, False, "errored", reason="load failed")
        if v >= first
        else Measurement(v, True, "passed", samples=FAST)
    )


@pytest.mark.parametrize(
    ("rule", "first_bad"),
    [
        (_slow_from("1.6"), "1.6"),
        (_slow_from("1.1"), "1.1"),
        (_slow_from("1.9"), "1.9"),
        (_fails_from("1.3"), "1.3"),
    ],
    ids=["slow_1.6", "slow_first_step", "slow_last", "fails_1.3"],
)
def test_first_bad(rule: Callable[[str], Measurement], first_bad: str) -> None:
    measure, calls = _by_version(rule)
    result = bisect(VERSIONS, measure, spec=SPEC)
    assert result.first_bad == first_bad
    assert result.last_good == VERSIONS[VERSIONS.index(first_bad) - 1]
    assert sum(calls.values()) - calls["1.0"] <= 5  # log2(10) steps plus the bad endpoint
    assert calls["1.0"] == len(result.steps)  # the good endpoint beside every step


def test_bad_endpoint_not_worse_names_nothing() -> None:
    measure, _ = _by_version(_slow_from("9.9"))
    result = bisect(VERSIONS, measure, spec=SPEC)
    assert result.first_bad is None
    assert "the bad version 1.9 is good" in result.stopped


def test_inconclusive_is_measured_again_then_said() -> None:
    def rule(v: str) -> Measurement:
        samples = FAST if v == "1.0" else SLOW if v == "1.9" else NOISY
        return Measurement(v, True, "passed", samples=samples)

    measure, calls = _by_version(rule)
    result = bisect(VERSIONS, measure, spec=SPEC, max_rounds=3)
    assert result.first_bad is None
    assert "1.4 stayed inconclusive after 3 rounds" in result.stopped
    assert calls["1.4"] == 3 and calls["1.0"] == 1 + 3  # measured beside each round
    assert "no first bad version" in evidence_lines(result, SPEC.name)[0]


NOISY_FAST = (30.0, 190.0, 70.0, 150.0, 120.0)  # 20% higher median, as undecided as NOISY


@pytest.mark.parametrize(
    ("samples", "good"),
    [(NOISY_FAST, True), (NOISY, False), (FAST, True)],
    ids=["undecided_faster_is_good", "undecided_slower_stays_inconclusive", "same_is_good"],
)
def test_an_undecided_change_the_better_way_is_no_regression(
    samples: tuple[float, ...], good: bool
) -> None:
    """Equal releases on a noisy machine differ by a few percent either way: bisect looks for
    a regression, so an undecided change the better way is good; the worse way stays
    inconclusive (measured again, then said)."""

    def rule(v: str) -> Measurement:
        chosen = FAST if v == "1.0" else SLOW if v >= "1.6" else samples
        return Measurement(v, True, "passed", samples=chosen)

    measure, _ = _by_version(rule)
    result = bisect(VERSIONS, measure, spec=SPEC, max_rounds=2)
    if good:
        assert result.first_bad == "1.6", result.stopped
        noted = [s.note for s in result.steps if s.version == "1.4"]
        if samples is NOISY_FAST:
            assert noted[0].startswith("no regression: inconclusive")
    else:
        assert result.first_bad is None and "stayed inconclusive" in result.stopped


def test_good_endpoint_must_run() -> None:
    measure, _ = _by_version(_fails_from("1.0"))
    with pytest.raises(BisectError, match=r"good version 1\.0 does not run ok"):
        bisect(VERSIONS, measure, spec=SPEC)


def test_evidence_names_medians_n_and_p() -> None:
    measure, _ = _by_version(_slow_from("1.6"))
    lines = evidence_lines(bisect(VERSIONS, measure, spec=SPEC), SPEC.name)
    assert lines[0] == "first bad: 1.6 (last good: 1.5)"
    assert "median 100 (n=5)" in lines[1]
    assert any(
        "1.6: median 50 (n=5) vs 1.0 median 100 (n=5) side by side; regressed (p=0.00794" in line
        for line in lines
    )


def test_each_step_is_judged_against_the_good_side_measured_with_it() -> None:
    """Drift: each step runs on a machine 30% slower than the step before, both sides alike;
    1.6 on is half as fast as the good endpoint beside it. Against the good endpoint's first
    measurement, every later step would look slower; side by side, 1.6 is found."""
    steps: Counter[str] = Counter()

    def measure(good: str, version: str) -> tuple[Measurement, Measurement]:
        speed = 0.7 ** steps["n"]
        steps["n"] += 1
        ours = 0.5 if version >= "1.6" else 1.0
        return (
            Measurement(good, True, "passed", samples=tuple(v * speed for v in FAST)),
            Measurement(version, True, "passed", samples=tuple(v * speed * ours for v in FAST)),
        )

    result = bisect(VERSIONS, measure, spec=SPEC)
    assert (result.first_bad, result.last_good) == ("1.6", "1.5")
