"""The comparison section and its terminal lines: inconclusive cases shown with the samples
they need, counts per verdict; gates a run did not evaluate shown in the report and terminal."""

from __future__ import annotations

import dataclasses

import pytest
from report_fixtures import EVIL, case, make_run, metric

from harness.report import default_sections, render_html, render_markdown
from harness.report.comparison import build_view, with_comparison
from harness.report.comparison_text import comparison_lines, gate_lines
from harness.results.compare import compare_runs
from harness.spec.gates import evaluate_gate, parse_gate
from harness.types import RunRecord, Status, Unit

DECODE = "throughput.decode_tps"
BASE = (20.1, 20.3, 19.9, 20.2, 20.0)
DROP = (9.4, 9.5, 9.3, 9.6, 9.45)  # -53%
SAME = (20.0, 20.2, 20.1, 19.95, 20.15)


def _pair(cases: list[tuple[str, tuple[float, ...], tuple[float, ...]]]) -> tuple[RunRecord, ...]:
    before = [
        case(m, "throughput", metrics=[metric(DECODE, Unit.TOKENS_PER_SECOND, *b)])
        for m, b, _ in cases
    ]
    after = [
        case(m, "throughput", metrics=[metric(DECODE, Unit.TOKENS_PER_SECOND, *a)])
        for m, _, a in cases
    ]
    base = dataclasses.replace(make_run(before), run_id="base")
    return base, make_run(after)


def _comparison():  # type: ignore[no-untyped-def]
    base, cur = _pair(
        [
            ("slow", BASE, DROP),  # 5 a side: regressed
            ("few", BASE[:3], DROP[:3]),  # 3 a side: inconclusive
            ("fine", BASE, SAME),  # unchanged
        ]
    )
    return compare_runs(base, cur), cur


def test_terminal_lines_name_each_regressed_and_inconclusive_case() -> None:
    comparison, _ = _comparison()
    assert comparison_lines(comparison) == [
        "vs baseline base: 1 regressed, 1 inconclusive, 1 unchanged",
        "  regressed: smoke::slow::throughput: throughput.decode_tps -53.0% "
        "regressed (p=0.00794, minimum effect 3%)",
        "  inconclusive: smoke::few::throughput: throughput.decode_tps -53.2% "
        "inconclusive (needs n >= 4 a side)",
        "  inconclusive: too few samples to decide; raise repeats to 4 or more",
    ]


def test_newly_failing_cases_give_their_reason_and_untrusted_text_is_plain() -> None:
    base, cur = _pair([("m", BASE, BASE)])
    broken = dataclasses.replace(cur.results[0], status=Status.CRASHED, reason="\x1b[31m" + EVIL)
    lines = comparison_lines(compare_runs(base, dataclasses.replace(cur, results=(broken,))))
    assert lines[0] == "vs baseline base: 1 newly_failing"
    assert lines[1] == "  newly_failing: smoke::m::throughput: [31m" + EVIL.replace("\n", " ")
    assert all("\x1b" not in line and "\n" not in line for line in lines)


def test_the_section_shows_inconclusive_metrics_with_their_sample_counts() -> None:
    comparison, cur = _comparison()
    view = build_view(comparison)
    assert view.counts == (("🔻 regressed", 1), ("❔ inconclusive", 1), ("= unchanged", 1))
    assert view.metric_counts == view.counts
    assert view.inconclusive == (
        "1 metric comparison(s) had too few samples to decide: needs n >= 4 a side "
        "(raise the suite's repeats)",
    )
    markdown = render_markdown(cur, with_comparison(comparison))
    assert "Cases: 🔻 regressed: **1** · ❔ inconclusive: **1** · = unchanged: **1**" in markdown
    assert "**Inconclusive:** 1 metric comparison(s) had too few samples" in markdown
    row = next(line for line in markdown.splitlines() if "❔ inconclusive | few" in line)
    assert "| 3 vs 3 |" in row and "needs n >= 4 a side" in row
    html = render_html(cur, with_comparison(comparison))
    assert "❔ inconclusive" in html and "needs n &gt;= 4 a side" in html


def test_the_comparison_comes_right_after_the_summary() -> None:
    comparison, _ = _comparison()
    keys = [s.key for s in with_comparison(comparison)]
    defaults = [s.key for s in default_sections()]
    assert keys == [defaults[0], "comparison", *defaults[1:]]


@pytest.mark.parametrize(
    ("baseline", "says"),
    [
        (None, "not evaluated: no baseline"),
        ((60.0, 51.0, 40.0), "not evaluated: -2.0% (95% "),
    ],
)
def test_a_gate_not_evaluated_is_shown_in_report_and_terminal(
    baseline: tuple[float, ...] | None, says: str
) -> None:
    measured = metric(DECODE, Unit.TOKENS_PER_SECOND, 50.0, 51.0, 49.0)
    gate = evaluate_gate(
        parse_gate(DECODE, "-5%"),
        measured,
        baseline=metric(DECODE, Unit.TOKENS_PER_SECOND, *baseline) if baseline else None,
    )
    assert gate.passed is None and says in gate.message
    run = make_run([case("m", "throughput", metrics=[measured], gates=[gate])])  # passed
    assert gate_lines(run) == [
        "gates not evaluated: 1",
        f"  smoke::m::throughput: {gate.message}",
    ]
    markdown = render_markdown(run)
    assert "### Gates not evaluated" in markdown
    row = next(line for line in markdown.splitlines() if says in line)
    assert row.startswith("| m | throughput |") and "| not evaluated |" in row
    assert "Gates not evaluated" in render_html(run)


def test_no_gate_lines_when_every_gate_was_evaluated() -> None:
    measured = metric(DECODE, Unit.TOKENS_PER_SECOND, 50.0)
    gate = evaluate_gate(parse_gate(DECODE, ">= 1"), measured)
    run = make_run([case("m", "throughput", metrics=[measured], gates=[gate])])
    assert gate.passed is True and gate_lines(run) == []
    assert "Gates not evaluated" not in render_markdown(run)
