"""compare, check by check: a named check whose verdict changed is reported, and a check that
fails anew is a ``new-failure`` finding, whatever its case's status did."""

from __future__ import annotations

import dataclasses

import pytest

from harness.core.types import Status, Verdict
from harness.report.comparison import build_view
from harness.report.comparison_text import comparison_lines
from harness.results.compare import compare_runs
from harness.results.fail_on import DEFAULT, FailOn, findings
from tests.results.check_cases import contract_case, contract_run

ALL = "seed=pass top_k=pass concurrent=pass tools=n.a."


@pytest.mark.parametrize(
    ("before", "after", "case", "checks", "finding"),
    [
        (ALL, ALL, Verdict.UNCHANGED, [], None),
        # the case failed both times (top_k): concurrent's new failure is what moved
        (
            "seed=pass top_k=fail concurrent=pass",
            "seed=pass top_k=fail concurrent=fail",
            Verdict.UNCHANGED,
            [("concurrent", Verdict.NEWLY_FAILING)],
            "new-failure: 1 checks newly failing (first: s::srv::api_contracts: "
            "concurrent: pass -> FAIL (concurrent was fail))",
        ),
        # one check fixed, another broken: the case failed both times
        (
            "seed=fail concurrent=pass",
            "seed=pass concurrent=fail",
            Verdict.UNCHANGED,
            [("concurrent", Verdict.NEWLY_FAILING), ("seed", Verdict.FIXED)],
            "new-failure: 1 checks newly failing",
        ),
        # a fix alone is no finding
        (
            "seed=fail concurrent=pass",
            "seed=pass concurrent=pass",
            Verdict.FIXED,
            [("seed", Verdict.FIXED)],
            None,
        ),
        # the case newly fails: both the case and its check say so
        (
            ALL,
            "seed=pass top_k=fail concurrent=pass tools=n.a.",
            Verdict.NEWLY_FAILING,
            [("top_k", Verdict.NEWLY_FAILING)],
            "new-failure: 1 checks newly failing",
        ),
        # a check the case's time ran out on: undecided, not a failing check (the timed-out
        # case newly fails)
        (
            "seed=pass concurrent=pass",
            "seed=pass concurrent=unjudged",
            Verdict.NEWLY_FAILING,
            [("concurrent", Verdict.INCONCLUSIVE)],
            None,
        ),
    ],
    ids=["same", "hidden-by-failed-case", "swap", "fixed", "case-too", "unjudged"],
)
def test_check_verdicts_between_runs(
    before: str,
    after: str,
    case: Verdict,
    checks: list[tuple[str, Verdict]],
    finding: str | None,
) -> None:
    baseline = contract_run("base", [contract_case(before)])
    unjudged = "unjudged" in after
    current_case = contract_case(after, Status.TIMED_OUT if unjudged else None)
    current = contract_run("cur", [current_case])
    comparison = compare_runs(baseline, current)
    (delta,) = comparison.cases
    assert delta.verdict is case
    assert [(c.check, c.verdict) for c in delta.checks] == checks
    check_lines = [
        f.line for f in findings(current, comparison, DEFAULT) if "checks newly failing" in f.line
    ]
    if finding is None:
        assert check_lines == []
    else:
        (line,) = check_lines
        assert line.startswith(finding)


def test_a_new_check_failure_fails_only_under_new_failure() -> None:
    baseline = contract_run("base", [contract_case("a=fail b=pass")])
    current = contract_run("cur", [contract_case("a=fail b=fail")])
    comparison = compare_runs(baseline, current)
    assert [f.kind for f in findings(current, comparison, {FailOn.NEW_FAILURE})] == [
        FailOn.NEW_FAILURE
    ]
    assert findings(current, comparison, {FailOn.REGRESSION, FailOn.NOT_COMPARABLE}) == []


def test_a_check_is_judged_even_where_the_case_is_not_comparable() -> None:
    """Another machine makes timings incomparable, not a check's verdict (named all the same)."""
    baseline = contract_run("base", [contract_case("a=pass b=pass", Status.PASSED)])
    current = contract_run("cur", [contract_case("a=pass b=warn", Status.PASSED)])
    current = dataclasses.replace(
        current, machine=dataclasses.replace(current.machine, cpu="other")
    )
    (delta,) = compare_runs(baseline, current).cases
    assert delta.verdict is Verdict.NOT_COMPARABLE
    assert [(c.check, c.verdict) for c in delta.checks] == [("b", Verdict.REGRESSED)]


def test_terminal_and_report_show_each_changed_check() -> None:
    baseline = contract_run("base", [contract_case("seed=fail top_k=fail concurrent=pass")])
    current = contract_run("cur", [contract_case("seed=pass top_k=fail concurrent=fail")])
    comparison = compare_runs(baseline, current)
    lines = comparison_lines(comparison)
    assert lines[0] == (
        "vs baseline run-base: 1 unchanged; checks changed: 1 newly_failing, 1 fixed"
    )
    assert lines[1:] == [
        "  check newly_failing: s::srv::api_contracts: concurrent: pass -> FAIL "
        "(concurrent was fail)",
        "  check fixed: s::srv::api_contracts: seed: FAIL -> pass (seed was fail)",
    ]
    view = build_view(comparison)
    assert view.check_counts == (("🔴 newly failing", 1), ("🟢 fixed", 1))
    assert view.checks is not None
    rows = [[cell.text for cell in row] for row in view.checks.rows]
    assert rows == [
        ["🔴 newly failing", "srv", "api_contracts", "—", "concurrent", "pass", "FAIL",
         "❌ failed → ❌ failed", "concurrent was fail"],
        ["🟢 fixed", "srv", "api_contracts", "—", "seed", "FAIL", "pass",
         "❌ failed → ❌ failed", "seed was fail"],
    ]  # fmt: skip


def test_a_comparison_without_checks_has_no_check_section() -> None:
    from harness.core.types import CaseResult

    plain = CaseResult("s::m::load", "s", "m", "load", Status.PASSED)
    comparison = compare_runs(contract_run("a", [plain]), contract_run("b", [plain]))
    assert comparison_lines(comparison) == ["vs baseline run-a: 1 unchanged"]
    view = build_view(comparison)
    assert not view.checks and view.check_counts == ()
