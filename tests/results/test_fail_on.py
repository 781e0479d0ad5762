"""The exit rules: which outcomes fail a run, parsed from ``--fail-on``, one line per finding."""

from __future__ import annotations

import dataclasses

import pytest

from harness.core.types import Gate, GateResult, SkipCause, Status, SuiteInfo, Verdict
from harness.results.compare import CaseDelta, Comparison
from harness.results.fail_on import (
    DEFAULT,
    FailOn,
    FailOnError,
    chosen_kinds,
    findings,
    notes,
    parse_fail_on,
)
from tests.report.report_fixtures import case, make_run

GATE = Gate("throughput.decode_tps", ">=", 5.0, False, ">= 5")
RELATIVE = Gate("throughput.decode_tps", "within", 0.05, True, "-5%")


def _gate(passed: bool | None, gate: Gate = GATE) -> GateResult:
    return GateResult(gate, 10.0, passed, f"throughput.decode_tps {gate.expression}: ...")


def _comparison(*verdicts: Verdict) -> Comparison:
    cases = tuple(
        CaseDelta(
            f"s::m{i}::load",
            f"m{i}",
            "load",
            {},
            Status.PASSED,
            Status.PASSED,
            v,
            reasons=(f"why {v.value}",),
        )
        for i, v in enumerate(verdicts)
    )
    return Comparison("base", "cur", (), (), (None, None), cases)


SKIPPED = [
    case("a", "load", Status.SKIPPED, reason="not in the local cache"),
    case("b", "load", Status.SKIPPED),
]
PASSED = [case("a", "load"), case("b", "load", Status.SKIPPED)]
UNJUDGED = [case("a", "throughput", gates=[_gate(None), _gate(None)])]
MIXED_GATES = [case("a", "throughput", gates=[_gate(None), _gate(True)])]
# relative gates of a run without a baseline wait for one: no finding (with one: judged)
WAITING = [case("a", "throughput", gates=[_gate(None, RELATIVE)])]
INPUT_SKIP = [
    case("a", "load"),
    dataclasses.replace(case("b", "load", Status.SKIPPED), skip_cause=SkipCause.INPUT),
]
INTENDED_SKIPS = [
    case("a", "load"),
    dataclasses.replace(case("b", "load", Status.SKIPPED), skip_cause=SkipCause.EXPECTED),
    dataclasses.replace(case("c", "load", Status.SKIPPED), skip_cause=SkipCause.NOT_APPLICABLE),
]

# (results, comparison, fail_on, kinds found)
TABLE = [
    (SKIPPED, None, DEFAULT, [FailOn.NOTHING_RAN]),
    (SKIPPED, None, frozenset(), []),
    (PASSED, None, DEFAULT, []),  # one case ran: something was measured
    ([], None, DEFAULT, []),  # no cases: its own exit status (5), not this policy's
    (UNJUDGED, None, DEFAULT, [FailOn.UNJUDGED_GATES]),
    (WAITING, None, DEFAULT, []),
    (WAITING, None, {FailOn.INCONCLUSIVE_GATE}, []),
    (WAITING, _comparison(), DEFAULT, [FailOn.UNJUDGED_GATES]),
    (INPUT_SKIP, None, DEFAULT, [FailOn.INPUT_SKIP]),  # even though another case ran
    (INPUT_SKIP, None, DEFAULT - {FailOn.INPUT_SKIP}, []),
    (INTENDED_SKIPS, None, DEFAULT, []),
    (MIXED_GATES, None, DEFAULT, []),  # one gate judged: not every gate went unjudged
    (MIXED_GATES, None, {FailOn.INCONCLUSIVE_GATE}, [FailOn.INCONCLUSIVE_GATE]),
    (UNJUDGED, None, {FailOn.INCONCLUSIVE_GATE}, [FailOn.INCONCLUSIVE_GATE]),
    (PASSED, _comparison(Verdict.NOT_COMPARABLE), DEFAULT, [FailOn.NOT_COMPARABLE]),
    (PASSED, _comparison(Verdict.NEWLY_FAILING), DEFAULT, [FailOn.NEW_FAILURE]),
    (PASSED, _comparison(Verdict.REGRESSED), DEFAULT, []),  # regression: opt in
    (PASSED, _comparison(Verdict.REGRESSED), DEFAULT | {FailOn.REGRESSION}, [FailOn.REGRESSION]),
    (PASSED, _comparison(Verdict.INCONCLUSIVE, Verdict.UNCHANGED, Verdict.IMPROVED), DEFAULT, []),
    (
        SKIPPED,
        _comparison(Verdict.NOT_COMPARABLE, Verdict.REGRESSED),
        set(FailOn),
        [FailOn.NOTHING_RAN, FailOn.NOT_COMPARABLE, FailOn.REGRESSION],
    ),
]


@pytest.mark.parametrize(("results", "comparison", "fail_on", "kinds"), TABLE)
def test_findings(results, comparison, fail_on, kinds) -> None:  # type: ignore[no-untyped-def]
    found = findings(make_run(results), comparison, fail_on)
    assert [f.kind for f in found] == kinds
    for finding in found:
        assert finding.line.startswith(f"{finding.kind.value}: ") and "\n" not in finding.line


def test_a_finding_names_the_first_case_and_its_reason() -> None:
    (nothing,) = findings(make_run(SKIPPED), None, DEFAULT)
    assert "all 2 cases were skipped" in nothing.line and "not in the local cache" in nothing.line
    (changed,) = findings(make_run(PASSED), _comparison(Verdict.NOT_COMPARABLE), DEFAULT)
    assert changed.line == (
        "not-comparable: 1 cases not comparable with the baseline "
        "(first: s::m0::load: why not_comparable)"
    )


def test_relative_gates_without_a_baseline_are_a_note_not_a_finding() -> None:
    (line,) = notes(make_run(WAITING), None)
    assert line.startswith("note: 1 relative gates not judged (smoke::a::throughput)")
    assert "apply once a baseline is given" in line
    assert notes(make_run(WAITING), _comparison()) == []  # with one, they are judged
    assert notes(make_run(UNJUDGED), None) == []  # absolute gates need no baseline


def test_an_input_skip_names_the_case_and_its_reason() -> None:
    run = make_run(
        [dataclasses.replace(r, reason="hub model 'x/y' not cached") for r in INPUT_SKIP]
    )
    (found,) = findings(run, None, DEFAULT)
    assert found.line.startswith("input-skip: 1 cases skipped because of the suite's input")
    assert "(first: " in found.line and "hub model 'x/y' not cached" in found.line


def test_an_empty_shard_is_not_nothing_ran() -> None:
    assert findings(make_run(SKIPPED), None, DEFAULT, shard=True) == []


@pytest.mark.parametrize(
    ("text", "regression", "expected"),
    [
        (None, False, DEFAULT),
        (None, True, DEFAULT | {FailOn.REGRESSION}),
        ("none", False, frozenset()),
        ("none", True, frozenset({FailOn.REGRESSION})),
        ("regression, nothing-ran", False, {FailOn.REGRESSION, FailOn.NOTHING_RAN}),
        ("inconclusive-gate", False, {FailOn.INCONCLUSIVE_GATE}),
    ],
)
def test_parse_fail_on(text: str | None, regression: bool, expected: frozenset[FailOn]) -> None:
    assert parse_fail_on(text, regression=regression) == expected


@pytest.mark.parametrize(
    ("text", "says"), [("", "empty"), ("regresion", "'regresion' is not a kind")]
)
def test_a_bad_fail_on_is_one_line_with_the_kinds(text: str, says: str) -> None:
    with pytest.raises(FailOnError) as info:
        parse_fail_on(text)
    assert says in str(info.value) and "nothing-ran" in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("cases", "named"),
    [
        (3, "s::m0::load, s::m1::load, s::m2::load"),
        (4, "s::m0::load, s::m1::load, s::m2::load, +1 more"),
    ],
)
def test_a_finding_names_three_cases_then_counts(cases: int, named: str) -> None:
    from harness.results.fail_on import _named

    assert _named([f"s::m{i}::load" for i in range(cases)]) == named


def test_a_skip_without_a_reason_and_a_case_without_one_are_still_one_line() -> None:
    (nothing,) = findings(make_run([case("a", "load", Status.SKIPPED)]), None, DEFAULT)
    assert nothing.line.endswith("(first: no reason recorded)")
    plain = CaseDelta(
        "s::m::load", "m", "load", {}, Status.PASSED, Status.FAILED, Verdict.NEWLY_FAILING
    )
    comparison = Comparison("b", "c", (), (), (None, None), (plain,))
    (found,) = findings(make_run(PASSED), comparison, DEFAULT)
    assert found.line == "new-failure: 1 cases newly failing"


def test_none_with_other_kinds_keeps_the_others() -> None:
    assert parse_fail_on("none,regression") == {FailOn.REGRESSION}
    assert parse_fail_on("regression,none,nothing-ran") == {FailOn.REGRESSION, FailOn.NOTHING_RAN}


def test_the_regression_line() -> None:
    (found,) = findings(make_run(PASSED), _comparison(Verdict.REGRESSED), {FailOn.REGRESSION})
    assert found.line == "regression: 1 cases regressed (first: s::m0::load: why regressed)"


def _suite(fail_on: tuple[str, ...] | None) -> SuiteInfo:
    return SuiteInfo("s", "s.suite.yaml", "0" * 64, fail_on=fail_on)


@pytest.mark.parametrize(
    ("command_line", "suites", "regression", "expected"),
    [
        (None, [], False, DEFAULT),
        (None, [_suite(None)], False, DEFAULT),
        (None, [_suite(("none",))], False, frozenset()),
        (None, [_suite(("none",))], True, frozenset({FailOn.REGRESSION})),
        (
            None,
            [_suite(("regression",)), _suite(("nothing-ran",))],
            False,
            {FailOn.REGRESSION, FailOn.NOTHING_RAN},
        ),  # several suites: all they say
        (None, [_suite(("output-change",)), _suite(None)], False, {FailOn.OUTPUT_CHANGE}),
        ("nothing-ran", [_suite(("none",))], False, {FailOn.NOTHING_RAN}),  # the command line
    ],
)
def test_the_command_line_then_the_suites_then_the_default(
    command_line: str | None,
    suites: list[SuiteInfo],
    regression: bool,
    expected: frozenset[FailOn],
) -> None:
    assert chosen_kinds(command_line, suites, regression=regression) == expected
