"""The Serving section: one row per point from a serving case's metrics and artifacts, n/a and
inconclusive where a point had too few requests, and the server's words escaped."""

from __future__ import annotations

import dataclasses
from typing import Any

from report_fixtures import EVIL, case, make_run

from harness.backends.openai_client import StreamReply
from harness.core.types import CaseResult, Metric, Status
from harness.report import render_html, render_markdown
from harness.scenarios.serving.section import build
from harness.scenarios.streams.artifacts import point_record
from harness.scenarios.streams.loop import LoopRun
from harness.scenarios.streams.metrics import point_metrics
from harness.scenarios.streams.schedule import LoadPoint, closed, open_rate
from harness.scenarios.streams.stats import RequestSample, Slo, point_stats


def requests(
    n: int, ttft: float, errors: int = 0, reason: str = "HTTP 503: busy"
) -> list[RequestSample]:
    done = [RequestSample(i, 0.1 * i, None, ttft, ttft + 0.5, 11, (0.05,) * 10) for i in range(n)]
    failed = [RequestSample(n + i, 0.0, reason, None, 0.2, 0) for i in range(errors)]
    return done + failed


def serving_case(
    model: str,
    points: list[tuple[LoadPoint, list[RequestSample]]],
    *,
    slo: dict[str, float] | None = None,
    status: Status = Status.PASSED,
    reason: str | None = None,
) -> CaseResult:
    """A case as the scenario records it, built by the scenario's own functions."""
    metrics: list[Metric] = []
    records: list[dict[str, Any]] = []
    thresholds = Slo(ttft_s=slo.get("ttft_p90_s")) if slo else None
    for point, samples in points:
        stats = point_stats(samples, 0, 10.0, thresholds)
        metrics.extend(point_metrics(point, stats))
        run: LoopRun[StreamReply] = LoopRun((), 0, 10.0, False, 4)
        records.append(point_record(point, run, stats, samples))
    artifacts = {
        "engine": "mlx_lm.server",
        "endpoint": "completions",
        "counted_by": "tokenizer",
        "prompt_tokens_counted": 126,
        "slo": slo,
        "points": records,
    }
    result = case(model, "serving", status, metrics=metrics, reason=reason)
    return dataclasses.replace(result, artifacts=artifacts)


def texts(table: Any) -> list[list[str]]:
    return [[c.text for c in row] for row in table.rows]


def test_no_serving_cases_no_section() -> None:
    assert build(make_run([case("m", "throughput")])) is None


def test_one_row_per_point_with_percentiles_and_goodput() -> None:
    result = serving_case(
        "smollm2",
        [
            (closed(1), requests(12, 0.020)),
            (closed(4), requests(30, 0.200, errors=2)),
            (open_rate(0.5), requests(3, 0.010)),  # too few requests
        ],
        slo={"ttft_p90_s": 0.1},
    )
    section = build(make_run([result]))
    assert section is not None and len(section.cases) == 1
    load = section.cases[0]
    headers = [c.label for c in load.points.columns]
    rows = texts(load.points)
    assert [r[0] for r in rows] == ["concurrency 1", "concurrency 4", "0.5 req/s"]
    col = headers.index
    assert rows[1][col("sent")] == "32" and rows[1][col("errors")] == "2"
    assert rows[1][col("req/s")] == "3.00"  # 30 completed over 10 s
    assert headers[col("req/s") + 2] == "TTFT p50/p90/p99 (ms)"
    assert rows[0][col("TTFT p50/p90/p99 (ms)")] == "20.0 / 20.0 / n/a"  # 12 values: no p99
    assert rows[2][col("TTFT p50/p90/p99 (ms)")] == "10.0 / n/a / n/a"
    goodput = col("goodput (req/s)")
    assert rows[0][goodput] == "1.20"  # 12 within the 0.1 s TTFT over 10 s
    assert load.points.rows[0][goodput].note == "100% within; p90 SLO met"
    assert (
        rows[1][goodput] == "0.00"
        and load.points.rows[1][goodput].note == "0% within; p90 SLO missed"
    )
    assert rows[2][goodput] == "inconclusive"
    assert load.points.rows[2][0].note == "inconclusive: 3 finished requests (needs 10)"
    assert texts(load.errors) == [["concurrency 4", "2", "HTTP 503: busy"]]
    assert "SLO ttft_p90 ≤ 0.1 s" in load.note and "engine mlx_lm.server" in load.note


def test_without_an_slo_goodput_says_so() -> None:
    section = build(make_run([serving_case("m", [(closed(2), requests(20, 0.02))])]))
    assert section is not None
    assert texts(section.cases[0].points)[0][-1] == "no SLO"


def test_hostile_reasons_and_names_are_escaped() -> None:
    failing = serving_case(
        EVIL,
        [(closed(2), requests(0, 0.0, errors=4, reason=EVIL))],
        status=Status.FAILED,
        reason=f"concurrency 2: all 4 finished requests failed ({EVIL})",
    )
    run = make_run([failing])
    section = build(run)
    assert section is not None
    assert [(r[0].text, r[2].text) for r in section.not_passed.rows] == [(EVIL, "❌ failed")]
    html = render_html(run)
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    md = render_markdown(run)
    load = md.split("## Serving", 1)[1].split("\n## ", 1)[0]
    assert "Failed requests" in load and "Serving cases that did not pass" in load
    assert "<script>" not in load
    assert not any(line.startswith("second line") for line in load.splitlines())


def test_the_section_claims_its_metrics() -> None:
    run = make_run([serving_case("m", [(closed(1), requests(12, 0.02))])])
    md = render_markdown(run)
    assert "## Serving" in md
    assert "serving.c1" not in md  # shown in the Serving section, not again under Other metrics


def test_latency_columns_take_their_unit_from_the_medians() -> None:
    slow_tail = requests(9, 0.020) + requests(3, 1.5)  # p50 20 ms, p90 1.5 s
    section = build(make_run([serving_case("m", [(closed(4), slow_tail)])]))
    assert section is not None
    headers = [c.label for c in section.cases[0].points.columns]
    row = texts(section.cases[0].points)[0]
    assert row[headers.index("TTFT p50/p90/p99 (ms)")] == "20.0 / 1500 / n/a"
