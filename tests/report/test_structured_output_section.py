"""The structured output section: one table per engine, the verdict counts of each model's
case (HTTP ones with honoured / rejected / ignored), the constraint's cost beside them, and its
metrics kept out of "Other metrics"."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from report_fixtures import case, make_run, metric

from harness.core.types import CaseResult, Status, Unit
from harness.report import render_html, render_markdown
from harness.report.table import Table
from harness.scenarios.structured_output import section as structured_output

VERDICTS = {"correct": 2, "conforms": 1, "nonconforming": 0, "truncated": 1, "not_json": 0}


def _result(
    model: str, engine: str, status: Status, honour: dict[str, int], reason: str | None = None
) -> CaseResult:
    result = case(
        model,
        "structured_output",
        status,
        metrics=(
            metric("structured_output.conform_rate", Unit.RATIO, 0.75),
            metric("structured_output.decode_tps", Unit.TOKENS_PER_SECOND, 80.0, 82.0),
            metric("structured_output.unconstrained_decode_tps", Unit.TOKENS_PER_SECOND, 100.0),
            metric("structured_output.cost_x", Unit.RATIO, 1.25, 1.22),
            metric("structured_output.ttft_s", Unit.SECONDS, 0.2),
        ),
        reason=reason,
    )
    facts: dict[str, Any] = {
        "engine": engine,
        "requests": 4,
        "verdicts": VERDICTS,
        "honour": honour,
    }
    return replace(result, artifacts=facts)


RUN = make_run(
    [
        _result("smollm2", "in process (llguidance 1.9.1)", Status.PASSED, {}),
        _result(
            "smollm2@mlx_lm.server",
            "mlx_lm.server",
            Status.FAILED,
            {"honoured": 0, "rejected": 0, "ignored": 4},
            "mlx_lm.server ignored response_format (json_schema) in 4 of 4 requests",
        ),
        _result(
            "smollm2@llama-server",
            "llama-server",
            Status.PASSED,
            {"honoured": 4, "rejected": 0, "ignored": 0},
        ),
    ]
)


def _tables() -> dict[str, Table]:
    data = structured_output.build(RUN)
    assert data is not None
    return {e.engine: e.table for e in data.engines}


def _row(table: Table) -> dict[str, str]:
    return {c.label: cell.text for c, cell in zip(table.columns, table.rows[0], strict=True)}


def test_one_table_per_engine_in_process_without_honour_columns() -> None:
    tables = _tables()
    assert list(tables) == ["in process (llguidance 1.9.1)", "llama-server", "mlx_lm.server"]
    local = _row(tables["in process (llguidance 1.9.1)"])
    assert "honoured" not in local
    assert (local["requests"], local["parsed"], local["conforms"], local["correct"]) == (
        "4",
        "3/4",
        "3/4",
        "2/4",
    )
    assert local["truncated"] == "1/4"
    assert local["cost (x)"].startswith("1.2")


def test_http_tables_count_what_the_server_did_and_mark_ignoring() -> None:
    tables = _tables()
    ignored = tables["mlx_lm.server"]
    row = dict(zip([c.label for c in ignored.columns], ignored.rows[0], strict=True))
    assert (row["honoured"].text, row["ignored"].text) == ("0/4", "4/4")
    assert row["ignored"].css == "st-failed" and row["status"].text == "❌ failed"
    assert _row(tables["llama-server"])["honoured"] == "4/4"


def test_no_structured_output_case_no_section() -> None:
    assert structured_output.build(make_run([case("m", "throughput")])) is None


def test_the_section_renders_and_claims_its_metrics() -> None:
    markdown = render_markdown(RUN)
    assert "Structured output" in markdown and "### mlx_lm.server" in markdown
    assert "Other metrics" not in markdown
    assert "<h3>llama-server</h3>" in render_html(RUN)
