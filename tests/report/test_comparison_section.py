"""The comparison section and its terminal lines: inconclusive cases shown with the samples
they need, counts per verdict; gates a run did not evaluate shown in the report and terminal."""

from __future__ import annotations

import dataclasses

import pytest
from gfm_facts import gfm_problems, unwrapped
from report_fixtures import EVIL, case, make_run, metric

from harness.core.types import RunRecord, Status, Unit
from harness.report import default_sections, render_html, render_markdown
from harness.report.comparison import build_view, more_samples, with_comparison
from harness.report.comparison_text import comparison_lines, gate_lines
from harness.results.compare import compare_runs
from harness.spec.gates import evaluate_gate, parse_gate

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
        "  inconclusive: too few samples to decide; repeats: 4 or more",
    ]


@pytest.mark.parametrize(
    ("scenarios", "hint"),
    [
        (["throughput"], "repeats: 4 or more"),
        # load's samples are its first load and each reload: repeats do not add any
        (["load"], "load's reloads: 3 or more (its first load and each reload)"),
        (["greedy_text"], "greedy_text: more prompts (4 a side; repeats do not add samples)"),
        (
            ["load", "throughput"],
            "load's reloads: 3 or more (its first load and each reload); repeats: 4 or more",
        ),
    ],
)
def test_the_hint_names_what_gives_more_samples(scenarios: list[str], hint: str) -> None:
    assert more_samples(scenarios, 4) == hint


def test_newly_failing_cases_give_their_reason_and_untrusted_text_is_plain() -> None:
    base, cur = _pair([("m", BASE, BASE)])
    broken = dataclasses.replace(cur.results[0], status=Status.CRASHED, reason="\x1b[31m" + EVIL)
    lines = comparison_lines(compare_runs(base, dataclasses.replace(cur, results=(broken,))))
    assert lines[0] == "vs baseline base: 1 newly_failing"
    assert lines[1] == "  newly_failing: smoke::m::throughput: \\x1b[31m" + EVIL.replace("\n", " ")
    assert all("\x1b" not in line and "\n" not in line for line in lines)


def test_the_section_lists_what_moved_and_counts_the_undecided_with_their_need() -> None:
    comparison, cur = _comparison()
    view = build_view(comparison)
    assert view.counts == (("🟥 regressed", 1), ("❔ inconclusive", 1), ("= unchanged", 1))
    assert view.metric_counts == view.counts
    assert view.inconclusive == (
        "1 metric comparison(s) had too few samples to decide: needs n >= 4 a side "
        "(repeats: 4 or more)",
    )
    markdown = render_markdown(cur, with_comparison(comparison))
    assert "Cases: 🟥 regressed: **1** · ❔ inconclusive: **1** · = unchanged: **1**" in markdown
    assert "**Inconclusive:** 1 metric comparison(s) had too few samples" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| 🟥 regressed |")]
    assert any("| slow | throughput |" in row and "| -53.0% |" in row for row in rows)
    assert any("| 5 vs 5 |" in row for row in rows)  # in the next column group (120 wide)
    assert not any(line.startswith("| ❔ inconclusive") for line in markdown.splitlines())
    assert (
        "Not listed here: **1** metric comparison(s) inconclusive, **1** unchanged "
        "(identical, or under the minimum effect with samples enough to show one). "
        "Every comparison: mlx-harness compare BASELINE CURRENT --out DIR writes "
        "DIR/changes.csv." in unwrapped(markdown)
    )
    assert gfm_problems(markdown) == []
    html = render_html(cur, with_comparison(comparison))
    assert "❔ inconclusive" in html and "needs n &gt;= 4 a side" in html
    assert "<b>1</b> metric comparison(s) inconclusive" in html


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
        "gates: 1 (1 not evaluated)",
        f"  smoke::m::throughput: {gate.message}",
    ]
    markdown = render_markdown(run)
    assert "### Gates" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| m |")]
    assert any(row.startswith("| m | throughput |") and "| not evaluated |" in row for row in rows)
    assert any(says in row for row in rows)  # the message, in its own column group
    assert "<h3>Gates</h3>" in render_html(run)


def test_every_gate_is_listed_failed_first_passed_too() -> None:
    """What CI checked is visible: passed gates are listed with what they measured."""
    measured = metric(DECODE, Unit.TOKENS_PER_SECOND, 50.0)
    ok = evaluate_gate(parse_gate(DECODE, ">= 1"), measured)
    bad = evaluate_gate(parse_gate(DECODE, ">= 100"), measured)
    run = make_run(
        [
            case("a", "throughput", metrics=[measured], gates=[ok]),
            case("b", "throughput", Status.FAILED, metrics=[measured], gates=[bad]),
        ]
    )
    assert ok.passed is True and bad.passed is False
    assert gate_lines(run) == [
        "gates: 2 (1 FAILED, 1 passed)",
        f"  smoke::b::throughput: {bad.message}",
        f"  smoke::a::throughput: {ok.message}",
    ]
    markdown = render_markdown(run)
    gates = markdown[markdown.index("### Gates") :]
    assert gates.index("| b | throughput |") < gates.index("| a | throughput |")
    assert "measured 50 tok/s" in ok.message and ok.message in gates


def test_passed_gates_on_the_terminal_are_capped_the_report_has_all() -> None:
    measured = metric(DECODE, Unit.TOKENS_PER_SECOND, 50.0)
    ok = evaluate_gate(parse_gate(DECODE, ">= 1"), measured)
    run = make_run([case(f"m{i}", "throughput", metrics=[measured], gates=[ok]) for i in range(25)])
    lines = gate_lines(run)
    assert lines[0] == "gates: 25 (25 passed)" and len(lines) == 1 + 20 + 1
    assert lines[-1] == "  +5 passed gates more (the report lists all)"
    assert render_markdown(run).count(ok.message) == 25
