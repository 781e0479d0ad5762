"""The pin-set matrix, check by check: each named check whose verdict differs between pin sets
gets a row under its case, with the change between adjacent pin sets, even where the case
failed under every pin set."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.check_types import CheckStatus
from harness.core.types import Status, Verdict
from harness.report.pin_matrix import build_view, render_pin_matrix
from harness.results.pin_matrix import build_pin_matrix
from tests.results.check_cases import contract_case, contract_run

VERSIONS = ("0.31.0", "0.31.1", "0.31.2")
P, F, NA = CheckStatus.PASS, CheckStatus.FAIL, CheckStatus.NOT_APPLICABLE

# (the case's checks per pin set, the rows expected: check, verdicts, adjacent changes)
TABLE = [
    (  # top_k fails everywhere (the case fails everywhere); concurrent breaks at 0.31.1
        ["top_k=fail concurrent=pass seed=pass"] * 1 + ["top_k=fail concurrent=fail seed=pass"] * 2,
        [("concurrent", (P, F, F), (Verdict.NEWLY_FAILING, None))],
    ),
    (  # broken then mended: both changes shown
        ["seed=pass", "seed=fail", "seed=pass"],
        [("seed", (P, F, P), (Verdict.NEWLY_FAILING, Verdict.FIXED))],
    ),
    (  # applies only from 0.31.2 on, and fails there
        ["tools=n.a. seed=pass", "tools=n.a. seed=pass", "tools=fail seed=pass"],
        [("tools", (NA, NA, F), (None, Verdict.NEWLY_FAILING))],
    ),
    (["seed=pass top_k=fail"] * 3, []),  # nothing moved: no check rows
]


def _runs(per_set: list[str]) -> list:
    return [contract_run(f"lm-{v}", [contract_case(per_set[i])], v) for i, v in enumerate(VERSIONS)]


@pytest.mark.parametrize(("per_set", "expected"), TABLE, ids=["hidden", "mended", "n.a.", "same"])
def test_a_row_per_check_that_changes(
    per_set: list[str],
    expected: list[tuple[str, tuple[CheckStatus, ...], tuple[Verdict | None, ...]]],
) -> None:
    (row,) = build_pin_matrix(_runs(per_set)).rows
    found = [
        (
            c.check,
            tuple(v.status if v else None for v in c.cells),
            tuple(s.verdict if s else None for s in c.steps),
        )
        for c in row.checks
    ]
    assert found == expected


def test_transitions_count_changed_checks_and_the_view_shows_them(tmp_path: Path) -> None:
    per_set = ["top_k=fail concurrent=pass"] + ["top_k=fail concurrent=fail"] * 2
    matrix = build_pin_matrix(_runs(per_set))
    first, second = matrix.transitions
    assert first.verdicts == {Verdict.UNCHANGED: 1}  # failed under both: the status is silent
    assert first.check_verdicts == {Verdict.NEWLY_FAILING: 1}
    assert second.check_verdicts == {}
    view = build_view(matrix)
    assert view.summary[0] == (
        "lm-0.31.0 → lm-0.31.1: 1 unchanged (of 1 cases); checks: 1 newly failing; "
        "measured one after another"
    )
    assert view.checks is not None
    assert [c.label for c in view.checks.columns] == [
        "model", "scenario", "point", "check",
        "lm-0.31.0", "→ lm-0.31.1", "lm-0.31.1", "→ lm-0.31.2", "lm-0.31.2",
    ]  # fmt: skip
    (row,) = view.checks.rows
    assert [c.text for c in row] == [
        "srv", "api_contracts", "—", "concurrent", "pass", "🔴 newly failing", "FAIL", "—", "FAIL",
    ]  # fmt: skip
    assert row[5].note == "concurrent was fail" and row[6].css == "st-failed"
    checks_col = [c.label for c in view.transitions.columns].index("checks changed")
    assert view.transitions.rows[0][checks_col].text == "1 newly failing"
    paths = render_pin_matrix(matrix, tmp_path / "m")
    md, html = paths.md.read_text(), paths.html.read_text()
    assert "## Checks that change" in md and "| concurrent |" in md
    assert 'id="checks"' in html and "concurrent" in html


def test_no_check_section_without_changed_checks(tmp_path: Path) -> None:
    matrix = build_pin_matrix(_runs(["seed=pass"] * 3))
    assert not build_view(matrix).checks
    paths = render_pin_matrix(matrix, tmp_path / "m")
    assert "Checks that change" not in paths.md.read_text()
    assert 'id="checks"' not in paths.html.read_text()


def test_a_pin_set_where_the_case_crashed_shows_no_verdict_there() -> None:
    import dataclasses

    runs = _runs(["seed=pass top_k=pass", "seed=pass top_k=pass", "seed=pass top_k=fail"])
    crashed = dataclasses.replace(runs[1].results[0], status=Status.CRASHED, checks=())
    runs[1] = dataclasses.replace(runs[1], results=(crashed,))
    (row,) = build_pin_matrix(runs).rows
    (check,) = row.checks
    assert check.check == "top_k"
    assert [c.status if c else None for c in check.cells] == [P, None, F]
    assert check.steps == (None, None)  # no checks beside a crash: its status says it
    assert [s.verdict if s else None for s in row.steps] == [
        Verdict.NEWLY_FAILING,
        Verdict.NOT_COMPARABLE,
    ]


def test_pin_matrix_command_fails_on_a_newly_failing_check(tmp_path: Path) -> None:
    from harness.cli.pin_matrix import write_matrix
    from harness.results.store import write_record

    per_set = ["top_k=fail concurrent=pass"] + ["top_k=fail concurrent=fail"] * 2
    dirs = []
    for run in _runs(per_set)[:2]:
        write_record(run, tmp_path / run.run_id)
        dirs.append(tmp_path / run.run_id)
    _, summary, bad = write_matrix(dirs, tmp_path / "matrix")
    assert bad
    assert "checks: 1 newly failing" in summary[0]
