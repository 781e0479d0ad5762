"""The speculative decoding section: one row per drafted case, in process and over HTTP, with
acceptance (and its counts, or why it is not reported), speed-up, decode and TTFT with and
without the draft, and whether greedy output stayed the same; its metrics claimed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from report_fixtures import case, make_run, metric

from harness.core.types import CaseResult, Status, Unit
from harness.report import render_html, render_markdown, speculative


def _case(
    model: str, scenario: str, artifacts: dict[str, Any], status: Status = Status.PASSED
) -> CaseResult:
    result = case(
        model,
        scenario,
        status,
        params={"num_draft_tokens": 3},
        metrics=(
            metric(f"{scenario}.acceptance", Unit.RATIO, 1.0, 1.0),
            metric(f"{scenario}.speedup", Unit.RATIO, 0.5, 0.6),
            metric(f"{scenario}.decode_tps", Unit.TOKENS_PER_SECOND, 50.0, 52.0),
            metric(f"{scenario}.baseline_decode_tps", Unit.TOKENS_PER_SECOND, 100.0, 104.0),
            metric(f"{scenario}.ttft_s", Unit.SECONDS, 0.02, 0.03),
            metric(f"{scenario}.baseline_ttft_s", Unit.SECONDS, 0.01, 0.02),
        ),
        reason="greedy output changed by the draft" if status is Status.FAILED else None,
    )
    return replace(result, artifacts=artifacts)


RUN = make_run(
    [
        _case(
            "local",
            "speculative",
            {
                "draft": "embedded: zoo/llama",
                "accepted_tokens": [12, 12],
                "drafted_tokens": [12, 12],
            },
        ),
        _case(
            "served",
            "http_speculative",
            {
                "engine": "mlx_lm.server",
                "draft": "/models/zoo/llama-draft",
                "acceptance_source": "unknown: mlx_lm.server reports nothing of its draft",
                "accepted_tokens": [None, None],
                "drafted_tokens": [None, None],
            },
        ),
        _case(
            "changed",
            "speculative",
            {
                "draft": "embedded: zoo/llama-draft",
                "accepted_tokens": [0],
                "drafted_tokens": [9],
                "first_mismatch": {"run": 1, "position": 5},
            },
            Status.FAILED,
        ),
    ]
)


def _rows() -> dict[str, dict[str, str]]:
    built = speculative.build(RUN)
    assert built is not None
    labels = [c.label for c in built.table.columns]
    return {
        row[0].text: {label: cell.text for label, cell in zip(labels, row, strict=True)}
        | {"acceptance note": row[4].note or ""}
        for row in built.table.rows
    }


def test_each_drafted_case_says_acceptance_speedup_and_greedy_output() -> None:
    rows = _rows()
    assert rows["local"]["engine"] == "in process"
    assert rows["local"]["acceptance"] == "1.00"
    assert rows["local"]["acceptance note"] == "24 of 24 drafted"
    assert rows["local"]["decode with / without (tok/s)"] == "51.0 / 102.0"
    assert rows["local"]["greedy output"] == "✅ same"
    assert rows["served"]["engine"] == "mlx_lm.server"
    assert rows["served"]["acceptance"] == "not reported"
    assert rows["served"]["draft"] == "llama-draft"
    assert rows["changed"]["greedy output"] == "❌ changed"


def test_no_drafted_case_no_section() -> None:
    assert speculative.build(make_run([case("m", "throughput")])) is None


def test_the_section_renders_and_claims_its_metrics() -> None:
    markdown = render_markdown(RUN)
    assert "## Speculative decoding" in markdown
    assert "Other metrics" not in markdown
    assert "Speculative decoding" in render_html(RUN)
