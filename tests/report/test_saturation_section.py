"""The Saturation knee and Stalls sections: the knee with its interval per case, its points,
the knee curve (a line per model) and the stall timeline, hostile model names escaped."""

from __future__ import annotations

import dataclasses
from typing import Any

from report_fixtures import EVIL, case, make_run

from harness.core.types import CaseResult, Metric, Status, Unit
from harness.report import render_html, render_markdown
from harness.scenarios.saturation.section import build as build_knees
from harness.scenarios.stall.section import build as build_stalls


def spread(p90: float | None) -> dict[str, Any]:
    return {"n": 16, "p50": p90, "p90": p90, "p99": None}


def knee_point(
    value: float, order: int, ttft: float, good: bool, over: str | None = None
) -> dict[str, Any]:
    return {
        "key": f"r{value:g}",
        "kind": "rate",
        "value": value,
        "label": f"{value:g} req/s",
        "sent": 16,
        "completed": 16,
        "errors": 0,
        "cut": 0,
        "order": order,
        "ttft_s": spread(ttft),
        "tpot_s": spread(0.01),
        "e2e_s": spread(ttft + 0.3),
        "p90_interval_s": {"ttft": [ttft * 0.8, ttft * 1.2]},
        "slo_verdict": "met" if good else "missed",
        "met_share": 1.0 if good else 0.0,
        "oversaturated": over,
        "good": good,
    }


def knee_case(model: str, top: float, status: Status = Status.PASSED) -> CaseResult:
    points = [
        knee_point(1, 0, 0.1, True),
        knee_point(2, 1, 0.2, True),
        knee_point(
            4,
            2,
            3.0,
            False,
            "queue growing: TTFT 0.2 → 3 s and requests in flight 1 → 9 over the point",
        ),
    ]
    artifacts = {
        "engine": "llama-server",
        "endpoint": "completions",
        "loop": "rate",
        "prompt_tokens_counted": 126,
        "slo": {"ttft_p90_s": 1.0, "tpot_p90_s": None, "e2e_p90_s": None},
        "points": points,
        "knee": {"value": top, "low": 1.0, "high": top, "resamples": 1000, "at_ceiling": False},
        "stop_reason": "over-saturated",
        "finding": f"knee {top:g} req/s (95% interval 1–{top:g})",
    }
    metrics = [Metric("saturation.knee_rps", Unit.REQUESTS_PER_SECOND, (top,))]
    result = case(model, "saturation", status, metrics=metrics)
    return dataclasses.replace(result, artifacts=artifacts)


def stall_case(model: str) -> CaseResult:
    timeline = [[[-0.1, 0.01], [0.0, 0.01], [0.8, 0.79], [0.81, 0.01]] for _ in range(2)]
    artifacts = {
        "engine": "mlx_lm.server",
        "streams": 2,
        "long_prompt_tokens": 2048,
        "window_s": 0.8,
        "stalled": True,
        "timeline": timeline,
        "finding": "stall: 2 running streams stopped 0.79 s (max ITL, 79x the 0.01 s baseline)",
    }
    metrics = [
        Metric("stall.max_itl_s", Unit.SECONDS, (0.79,)),
        Metric("stall.baseline_itl_s", Unit.SECONDS, (0.01,)),
        Metric("stall.stall_s", Unit.SECONDS, (0.78,)),
        Metric("stall.tokens_lost", Unit.TOKENS, (156.0,)),
        Metric("stall.long_ttft_s", Unit.SECONDS, (0.8,)),
    ]
    return dataclasses.replace(case(model, "stall", metrics=metrics), artifacts=artifacts)


def texts(table: Any) -> list[list[str]]:
    return [[c.text for c in row] for row in table.rows]


def test_no_cases_no_sections() -> None:
    run = make_run([case("m", "throughput")])
    assert build_knees(run) is None and build_stalls(run) is None


def test_the_knee_per_case_with_its_interval_and_a_curve_per_model() -> None:
    run = make_run([knee_case("mlx", 2.0), knee_case("llama", 1.0)])
    section = build_knees(run)
    assert section is not None
    rows = {row[0].text: row for row in section.summary.rows}
    assert rows["mlx"][4].text == "2" and rows["mlx"][4].note == "1–2"
    assert rows["mlx"][8].text == "over-saturated"
    (chart,) = section.charts
    assert [item.label for item in chart.legend] == ["llama", "mlx"] and chart.guided
    points = texts(section.cases[0].points)
    assert [p[0] for p in points] == ["1", "2", "4"]
    assert points[2][-1].startswith("queue growing")


def test_the_stall_per_case_and_its_timeline() -> None:
    section = build_stalls(make_run([stall_case("mlx")]))
    assert section is not None
    (row,) = texts(section.summary)
    assert row[-1].startswith("stall: 2 running streams stopped 0.79 s") and row[-2] == "156"
    (chart,) = section.charts
    assert [item.label for item in chart.legend] == ["stream 1", "stream 2"]


def test_hostile_names_are_escaped_and_the_metrics_claimed() -> None:
    run = make_run([knee_case(EVIL, 2.0), stall_case(EVIL)])
    html = render_html(run)
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    assert "chart-knee-0" in html and "chart-stall-0" in html
    md = render_markdown(run)
    assert "## Saturation knee" in md and "## Stalls" in md
    assert "<script>" not in md.split("## Saturation knee", 1)[1]
    assert "saturation.knee_rps" not in md and "stall.max_itl_s" not in md
