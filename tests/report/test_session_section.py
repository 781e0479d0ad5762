"""The agent sessions section: a summary row per case, per case its turns with what was
reusable and reused, the checks (same answer, not checked, miss, rewritten history) and a
TTFT-per-turn chart; its metrics kept out of "Other metrics"."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from report_fixtures import case, make_run, metric

from harness.core.types import CaseResult, Status, Unit
from harness.report import render_html, render_markdown
from harness.scenarios.session import section as session


def _turn(turn: int, reusable: int, reused: int | None, **extra: Any) -> dict[str, Any]:
    prompt = 600 + 100 * turn
    return {
        "turn": turn,
        "kind": "user" if turn % 3 == 1 else "tool",
        "prompt_tokens": prompt,
        "reusable_tokens": reusable,
        "reused_tokens": reused,
        "new_tokens": None if reused is None else prompt - reused,
        "ttft_s": [0.02, 0.03],
        "cold_ttft_s": [0.2, 0.25],
        "prefill_tps": [5000.0],
        "identical": True,
        "differs_at": None,
        "missed": False,
        "miss_reason": None,
        "history_rewritten_at": None,
        "cache_fault": None,
        "answer": "x",
        **extra,
    }


def _case(model: str, turns: list[dict[str, Any]], status: Status = Status.PASSED) -> CaseResult:
    result = case(
        model,
        "session",
        status,
        metrics=(
            metric("session.ttft_s", Unit.SECONDS, 0.02, 0.03),
            metric("session.cold_ttft_s", Unit.SECONDS, 0.2, 0.25),
            metric("session.reuse_share", Unit.RATIO, 1.0, 1.0),
            metric("session.cached_share", Unit.RATIO, 0.8, 0.9),
        ),
        reason="cache miss in 2 of 3 turns" if status is Status.FAILED else None,
    )
    return replace(result, artifacts={"engine": "mlx_lm", "turns": [turns]})


RUN = make_run(
    [
        _case("kept", [_turn(1, 0, 0), _turn(2, 700, 700), _turn(3, 800, 800)]),
        _case(
            "missed",
            [
                _turn(1, 0, 0, identical=None),
                _turn(2, 700, 0, identical=None, missed=True),
                _turn(3, 800, 0, identical=None, missed=True),
            ],
            Status.FAILED,
        ),
        _case(
            "rewritten",
            [
                _turn(1, 0, 0),
                _turn(2, 624, 624, history_rewritten_at='token 624: "<think>" then "<tool_call>"'),
            ],
        ),
    ]
)


def _built() -> session.Sessions:
    built = session.build(RUN)
    assert built is not None
    return built


def test_one_summary_row_per_case_and_a_turn_table_each() -> None:
    built = _built()
    assert [row[0].text for row in built.summary.rows] == ["kept", "missed", "rewritten"]
    labels = [c.label for c in built.cases[0].table.columns]
    assert labels[:6] == ["turn", "answers", "prompt", "reusable", "reused", "new"]
    second = built.cases[0].table.rows[1]
    assert [cell.text for cell in second[2:6]] == ["800", "700", "700", "100"]
    assert built.cases[0].chart is not None


def test_misses_not_checked_answers_and_rewritten_history_are_said() -> None:
    missed, rewritten = _built().cases[1:]
    row = missed.table.rows[1]
    assert row[-1].text == "cache miss" and row[-1].css == "st-failed"
    assert row[-2].text == "not checked"
    said = "answers with and without the cache not compared"
    assert any(n.startswith(said) for n in missed.notes)
    assert missed.notes[0] == "cache miss in 2 of 3 turns"
    assert any(
        "rendered the history differently in 1 turn (first turn 2" in n for n in rewritten.notes
    )
    assert rewritten.table.rows[1][-1].text.startswith("history rewritten at token 624")


def test_no_session_case_no_section() -> None:
    assert session.build(make_run([case("m", "throughput")])) is None


def test_the_section_renders_and_claims_its_metrics() -> None:
    markdown = render_markdown(RUN)
    assert "## Agent sessions" in markdown
    assert "Other metrics" not in markdown
    html = render_html(RUN)
    assert "Agent sessions" in html and "TTFT per turn" in html
    assert "&lt;think&gt;" in html or "&lt;think>" in html
