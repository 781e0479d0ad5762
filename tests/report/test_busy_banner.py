"""The busy banner in the report's Summary (issue 37, item 5): how many cases were measured on
a dirty machine, the first with why, and what became of their gates."""

from __future__ import annotations

import dataclasses

import pytest
from report_fixtures import case, make_run

from harness.core.types import CaseResult, GateResult, RunRecord
from harness.report import render_html, render_markdown
from harness.report.machine_state import busy_banner
from harness.spec.gates import parse_gate

BUSY = "machine busy (load 5.3, 42% CPU in other processes)"
FLOOR = parse_gate("throughput.decode_tps", ">= 100")


def _measured(name: str, dirty: list[str], gates: tuple[GateResult, ...] = ()) -> CaseResult:
    state = {"machine_state": {"dirty": dirty, "runs": []}}
    return dataclasses.replace(case(name, "throughput"), artifacts=state, gates=gates)


HELD = GateResult(FLOOR, 700.0, True, "held")
UNJUDGED = GateResult(FLOOR, 70.0, None, "not judged")
TAIL = " They are not compared with a baseline; see Machine state."
GATES = (
    " Their gates: {} (load only slows a run: a floor on a rate or a ceiling on a time that "
    "passes holds; other gates there are not judged)."
)


@pytest.mark.parametrize(
    ("run", "banner"),
    [
        (make_run([_measured("a", []), _measured("b", [])]), None),
        (make_run([case("a", "throughput")]), None),  # an older record: no state
        (
            make_run([_measured("a", []), _measured("b", [BUSY])]),
            f"1 of 2 cases were measured on a dirty machine (first: smoke::b::throughput: {BUSY})."
            + TAIL,
        ),
        (
            make_run(
                [_measured("a", [BUSY, "on battery"], (HELD,)), _measured("b", [BUSY], (UNJUDGED,))]
            ),
            "2 of 2 cases were measured on a dirty machine (first: smoke::a::throughput: "
            f"{BUSY}; on battery)." + GATES.format("1 passed, 1 not judged") + TAIL,
        ),
    ],
)
def test_the_busy_banner(run: RunRecord, banner: str | None) -> None:
    got = busy_banner(run)
    if banner is None:
        assert got is None
        assert "busy machine" not in render_markdown(run)
    else:
        assert got == banner
        markdown = render_markdown(run)
        summary = markdown.split("\n## ", 2)[1]
        assert "**⚠ busy machine:**" in summary and "Summary" in summary.splitlines()[0]
        assert "⚠ busy machine:</strong>" in render_html(run)


def _waited(name: str, waited: float | None, quiet: bool) -> CaseResult:
    state: dict[str, object] = {"dirty": [] if quiet else [BUSY], "runs": []}
    if waited is not None:
        state |= {"waited_for_quiet_s": waited, "quiet": quiet}
    return dataclasses.replace(case(name, "throughput"), artifacts={"machine_state": state})


@pytest.mark.parametrize(
    ("results", "line", "cells"),
    [
        ([_waited("a", None, True)], None, None),  # no wait_for_quiet_s: no column, no line
        (
            [_waited("a", 12.04, True), _waited("b", 60.0, False)],
            "machine: waited for quiet before 2 cases, 72 s in all; 1 still busy after the wait "
            "(wait_for_quiet_s)",
            ("12.0 s (quiet)", "60.0 s (still busy)"),
        ),
    ],
)
def test_the_wait_for_quiet_is_shown(
    results: list[CaseResult], line: str | None, cells: tuple[str, ...] | None
) -> None:
    from harness.report.machine_state import build, machine_lines

    run = make_run(results)
    lines = machine_lines(run)
    assert (lines[0] if lines and lines[0].startswith("machine: waited") else None) == line
    built = build(run)
    assert built is not None
    labels = [c.label for c in built.table.columns]
    if cells is None:
        assert "waited for quiet" not in labels
    else:
        at = labels.index("waited for quiet")
        assert labels[-1] == "why"
        assert {row[at].text for row in built.table.rows} == set(cells)
        assert "waited for quiet" in render_markdown(run)
