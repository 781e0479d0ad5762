"""bisect following one named check: the first version where its verdict differs from the good
version's, whatever the case's status (it may fail at every version)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable

import pytest

from harness.core.types import Status
from harness.results.bisect import (
    BisectError,
    Measurement,
    MeasurePair,
    bisect,
    evidence_lines,
    measurement_of,
)
from tests.results.check_cases import contract_case, contract_run

VERSIONS = [f"0.31.{i}" for i in range(8)]


def _measure(rule: Callable[[str], str], check: str = "concurrent") -> tuple[MeasurePair, Counter]:
    """Each side as ``measurement_of`` reads a run whose one case has the checks of
    ``rule(version)``; ``calls`` counts each version's runs."""
    calls: Counter[str] = Counter()

    def one(version: str) -> Measurement:
        calls[version] += 1
        run = contract_run(version, [contract_case(rule(version))], version)
        return measurement_of(run, None, version, check=check)

    return (lambda good, version: (one(good), one(version))), calls


def _breaks_at(first: str) -> Callable[[str], str]:
    # top_k fails at every version, so the case fails at every version
    return lambda v: f"top_k=fail concurrent={'fail' if v >= first else 'pass'}"


@pytest.mark.parametrize("first_bad", ["0.31.1", "0.31.4", "0.31.7"])
def test_first_version_whose_check_changed_though_the_case_always_failed(first_bad: str) -> None:
    measure, _ = _measure(_breaks_at(first_bad))
    result = bisect(VERSIONS, measure, spec=None, check="concurrent")
    assert result.first_bad == first_bad
    assert result.last_good == VERSIONS[VERSIONS.index(first_bad) - 1]
    bad = next(s for s in result.steps if s.version == first_bad)
    assert bad.note == "concurrent: pass -> FAIL (concurrent was fail)"
    lines = evidence_lines(result, None)
    assert lines[0] == f"first bad: {first_bad} (last good: {result.last_good})"
    assert lines[1] == "  good 0.31.0: check concurrent pass (case failed)"
    assert any(
        f"bad {first_bad}: check concurrent FAIL (case failed) vs 0.31.0 check concurrent "
        "pass (case failed) side by side" in line
        for line in lines
    )


def test_a_check_that_gets_fixed_is_found_too() -> None:
    """The target is a change of the check's verdict: fail -> pass is found the same way."""
    measure, _ = _measure(lambda v: f"concurrent={'pass' if v >= '0.31.3' else 'fail'}")
    result = bisect(VERSIONS, measure, spec=None, check="concurrent")
    assert result.first_bad == "0.31.3"


def test_a_bad_end_with_the_same_verdict_names_nothing() -> None:
    measure, _ = _measure(lambda v: "top_k=fail concurrent=pass")
    result = bisect(VERSIONS, measure, spec=None, check="concurrent")
    assert result.first_bad is None
    assert "is good (concurrent pass, as at 0.31.0)" in result.stopped


def test_a_check_not_judged_is_measured_again_then_said() -> None:
    measure, calls = _measure(
        lambda v: "concurrent=fail" if v == "0.31.7" else
        "concurrent=unjudged" if v == "0.31.3" else "concurrent=pass"
    )  # fmt: skip
    result = bisect(VERSIONS, measure, spec=None, check="concurrent", max_rounds=2)
    assert result.first_bad is None
    assert calls["0.31.3"] == 2
    assert "0.31.3 stayed inconclusive after 2 rounds (not judged: concurrent: pass -> " in (
        result.stopped
    )


def test_a_crash_that_records_no_checks_is_bad() -> None:
    def measure(good: str, version: str) -> tuple[Measurement, Measurement]:
        def one(v: str) -> Measurement:
            case = contract_case("concurrent=pass")
            if v >= "0.31.5":
                case = dataclasses.replace(
                    case, status=Status.CRASHED, checks=(), reason="worker died"
                )
            return measurement_of(contract_run(v, [case], v), None, v, check="concurrent")

        return one(good), one(version)

    result = bisect(VERSIONS, measure, spec=None, check="concurrent")
    assert result.first_bad == "0.31.5"
    assert result.steps[0].note == "concurrent not recorded (status crashed: worker died)"


def test_the_good_version_must_record_the_check() -> None:
    def measure(good: str, version: str) -> tuple[Measurement, Measurement]:
        crashed = Measurement(good, False, "crashed", reason="boom")
        return crashed, crashed

    with pytest.raises(BisectError, match=r"the good version 0\.31\.0 did not record check x"):
        bisect(VERSIONS, measure, spec=None, check="x")


@pytest.mark.parametrize(
    ("check", "error"),
    [
        ("concurrnt", "has no check 'concurrnt'; did you mean 'concurrent'?"),
        ("zzz", "has no check 'zzz'; it has: seed, concurrent"),
        ("template_contracts:seed", "runs api_contracts, not template_contracts"),
    ],
)
def test_a_check_the_case_lacks_is_one_line(check: str, error: str) -> None:
    run = contract_run("a", [contract_case("seed=pass concurrent=pass")])
    with pytest.raises(BisectError, match=error):
        measurement_of(run, None, "1", check=check)


def test_a_scenario_named_check_is_read() -> None:
    run = contract_run("a", [contract_case("seed=pass concurrent=fail")])
    found = measurement_of(run, None, "1", check="api_contracts:concurrent")
    assert found.check is not None and found.check.name == "concurrent"
    assert not found.ok and found.status == "failed"


def test_a_case_skipped_at_a_version_says_why() -> None:
    """Seen on the real index: zoo/lfm2's tool parser is not in mlx-lm 0.30.5, so its one case
    was skipped there, and bisect said "needs exactly one case, the run has 1"."""
    case = dataclasses.replace(
        contract_case("concurrent=pass"),
        status=Status.SKIPPED,
        reason="runtime_incompatible: tool parser 'pythonic' (inferred) is not in mlx-lm 0.30.5",
    )
    run = contract_run("0.30.5", [case], "0.30.5")
    with pytest.raises(BisectError) as info:
        measurement_of(run, None, "0.30.5", check="concurrent")
    message = str(info.value)
    assert "was skipped at 0.30.5 (runtime_incompatible: tool parser 'pythonic'" in message
    assert message.endswith("give --good and --bad versions where it runs")
