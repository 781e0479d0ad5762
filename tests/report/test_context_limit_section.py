"""The context limits section: one row per case with the window and what each request near it
got (refused, stopped, silently truncated or shifted, accepted), the numbers on hover, the
findings under the table; its metrics claimed."""

from __future__ import annotations

from dataclasses import replace

from report_fixtures import case, make_run, metric

from harness.core.types import CaseResult, Status, Unit
from harness.report import render_html, render_markdown
from harness.scenarios.context_limit import section as context_limit


def _case(model: str, engine: str, outcomes: dict[str, str], status: Status) -> CaseResult:
    result = case(
        model,
        "context_limit",
        status,
        metrics=(
            metric("context_limit.window_tokens", Unit.TOKENS, 256.0),
            metric("context_limit.past_window_tokens", Unit.TOKENS, 320.0),
        ),
        reason="silently shifted past the window" if status is Status.FAILED else None,
    )
    probes = {
        name: f"{name}: {value}: sent 320 tokens, window 256" for name, value in outcomes.items()
    }
    artifacts = {"engine": engine, "outcomes": outcomes, "probes": probes}
    if "accepted" in outcomes.values():
        artifacts["finding"] = "nothing enforces the window of 256 tokens"
    return replace(result, artifacts=artifacts)


RUN = make_run(
    [
        _case(
            "refuses",
            "llama-server",
            {"inside": "ok", "past_window": "error", "generation_past_window": "stopped"},
            Status.PASSED,
        ),
        _case(
            "shifts",
            "llama-server",
            {"inside": "ok", "past_window": "error", "generation_past_window": "shifted"},
            Status.FAILED,
        ),
        _case(
            "computes",
            "in process",
            {"inside": "ok", "past_window": "accepted", "generation_past_window": "accepted"},
            Status.PASSED,
        ),
    ]
)


def test_each_case_says_what_each_request_got() -> None:
    built = context_limit.build(RUN)
    assert built is not None
    rows = {row[0].text: row for row in built.table.rows}
    assert [c.text for c in rows["refuses"][4:]] == ["ok", "error", "stopped"]
    shifted = rows["shifts"][6]
    assert shifted.text == "shifted" and shifted.css == "st-failed"
    assert shifted.title == "generation_past_window: shifted: sent 320 tokens, window 256"
    assert rows["computes"][1].text == "in process" and rows["computes"][2].text == "256"
    assert "computes: nothing enforces the window of 256 tokens" in built.findings
    assert "shifts: silently shifted past the window" in built.findings


def test_no_context_limit_case_no_section() -> None:
    assert context_limit.build(make_run([case("m", "throughput")])) is None


def test_the_section_renders_and_claims_its_metrics() -> None:
    markdown = render_markdown(RUN)
    assert "## Context limits" in markdown
    assert "Other metrics" not in markdown
    assert "Context limits" in render_html(RUN)
