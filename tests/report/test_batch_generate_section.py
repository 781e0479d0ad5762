"""The batched generation section: a table per batch_generate case, a row per batch size with
prefill, decode in total and per request, and whether the batched answers were the answers
alone (yes, no, not judged); its metrics claimed; the per-request vs total chart."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from report_fixtures import case, make_run, metric

from harness.core.types import CaseResult, Status, Unit
from harness.report import batch_generate, render_html, render_markdown, terminal_summary
from harness.report.charts import build_charts

TPS = Unit.TOKENS_PER_SECOND


def _case(
    model: str, identical: dict[str, bool], status: Status = Status.PASSED, **more: Any
) -> CaseResult:
    metrics = []
    for size in (1, 4):
        metrics += [
            metric(f"batch_generate.b{size}.prefill_tps", TPS, 1000.0 * size),
            metric(f"batch_generate.b{size}.decode_tps", TPS, 100.0 * size, 100.0 * size),
            metric(f"batch_generate.b{size}.decode_tps_per_request", TPS, 100.0),
            metric(f"batch_generate.b{size}.e2e_s", Unit.SECONDS, 0.5),
        ]
    result = case(model, "batch_generate", status, metrics=tuple(metrics))
    artifacts = {"batch_sizes": [1, 4], "identical": identical, **more}
    return replace(result, artifacts=artifacts)


RUN = make_run(
    [
        _case("same", {"1": True, "4": True}),
        _case("shifted", {"1": True, "4": False}, Status.FAILED, first_mismatch={"request": 2}),
        _case("blind", {"1": True, "4": True}, Status.FAILED, prompt_dependence="blind"),
    ]
)


def _tables() -> dict[str, list[list[str]]]:
    built = batch_generate.build(RUN)
    assert built is not None
    return {c.model: [[cell.text for cell in row] for row in c.table.rows] for c in built.cases}


def test_a_row_per_batch_size_with_its_speeds_and_answers() -> None:
    tables = _tables()
    assert set(tables) == {"same", "shifted", "blind"}
    one, four = tables["same"]
    assert one[0] == "1" and four[0] == "4"
    assert four[2:] == ["400.0 ± 0.0", "100.0", "✅ yes"]
    assert [row[-1] for row in tables["shifted"]] == ["✅ yes", "❌ no"]
    assert [row[-1] for row in tables["blind"]] == ["not judged", "not judged"]


def test_no_batch_case_no_section_and_the_section_renders_claiming_its_metrics() -> None:
    assert batch_generate.build(make_run([case("m", "throughput")])) is None
    markdown = render_markdown(RUN)
    assert "## Batched generation" in markdown and "**shifted**" in markdown
    assert "Other metrics" not in markdown
    assert "Batched generation" in render_html(RUN)


def test_the_per_request_vs_total_chart_has_a_point_per_batch_size() -> None:
    (chart,) = [c for c in build_charts(RUN) if c.key == "batch-per-user-vs-total"]
    rows = [[cell.text for cell in row] for row in chart.table.rows]
    assert ["same", "100", "100.0"] in rows and ["same", "400", "100.0"] in rows
    assert chart.shows_something


def test_the_terminal_shows_decode_alone_and_at_the_largest_batch() -> None:
    lines = terminal_summary(RUN)
    start = lines.index("batch_generate") + 1
    header, _rule, *rows = lines[start : start + 5]
    assert header.split()[-7:] == ["b1", "decode", "b4", "decode", "b4", "per", "req"]
    same = next(row for row in rows if row.strip().startswith("same"))
    assert same.split()[-3:] == ["100.0", "400.0", "100.0"]
