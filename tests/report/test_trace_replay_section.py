"""The trace replay section: a row per trace_replay case with its trace, speed-up, what
finished, throughput, latencies and the replay's lag; its metrics claimed; none without a
case."""

from __future__ import annotations

from dataclasses import replace

from report_fixtures import case, make_run, metric

from harness.core.types import CaseResult, Status, Unit
from harness.report import render_html, render_markdown
from harness.scenarios.trace_replay import section as trace_replay


def _case(
    model: str, status: Status = Status.PASSED, lag: float = 0.002, cut: int = 0
) -> CaseResult:
    metrics = (
        metric("trace_replay.completed", Unit.COUNT, 38.0),
        metric("trace_replay.errors", Unit.COUNT, 2.0),
        metric("trace_replay.request_rps", Unit.REQUESTS_PER_SECOND, 1.6),
        metric("trace_replay.ttft_p90_s", Unit.SECONDS, 0.25),
        metric("trace_replay.dispatch_lag_max_s", Unit.SECONDS, lag),
    )
    result = case(model, "trace_replay", status, metrics=metrics)
    trace = {"file": "synthetic.jsonl", "format": "harness", "requests": 40, "of": 40}
    artifacts = {"trace": {**trace, "sessions": 4}, "speedup": 2.0, "replay": {"cut": cut}}
    return replace(result, artifacts=artifacts)


RUN = make_run([_case("on-time"), _case("late", Status.FAILED, lag=0.9, cut=3)])


def test_a_row_per_case_with_its_trace_and_figures() -> None:
    built = trace_replay.build(RUN)
    assert built is not None
    rows = {row[0].text: row for row in built.table.rows}
    assert set(rows) == {"on-time", "late"}
    on_time = rows["on-time"]
    assert on_time[1].text == "synthetic.jsonl"
    assert on_time[1].note == "harness, 40 of 40 requests, 4 sessions"
    assert [c.text for c in on_time[2:4]] == ["2x", "38 / 2"]
    labels = [c.label for c in built.table.columns]
    lag_max = next(i for i, label in enumerate(labels) if label.startswith("lag max"))
    assert rows["late"][lag_max].text != on_time[lag_max].text
    assert "failed" in (rows["late"][0].note or "")
    assert rows["late"][3].text == "38 / 2 / 3 cut"


def test_no_case_no_section_and_the_section_claims_its_metrics() -> None:
    assert trace_replay.build(make_run([case("m", "throughput")])) is None
    markdown = render_markdown(RUN)
    assert "## Trace replay" in markdown and "Other metrics" not in markdown
    assert "Trace replay" in render_html(RUN)
