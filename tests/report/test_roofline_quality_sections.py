"""The performance section's roofline columns and bandwidth lines, and the quality section."""

from __future__ import annotations

import dataclasses

import pytest
from report_fixtures import case, make_run, metric

from harness.report import performance, quality
from harness.report.render import render_html, render_markdown
from harness.types import CaseResult, Unit

BANDWIDTH = {
    "bytes_per_s": 13.15e9,
    "kernel": "gemv",
    "kernels_bytes_per_s": {"sum": 2.9e9, "gemv": 13.15e9},
    "buffer_bytes": 256 * 2**20,
    "repeats": 7,
    "flops_per_s": 61.25e9,
    "fingerprint": "0123abcd<b>",
    "source": "cached",
}


def with_artifacts(result: CaseResult, **artifacts: object) -> CaseResult:
    return dataclasses.replace(result, artifacts=artifacts)


def roofline_case(depth: int, decode: float, ceiling: float) -> CaseResult:
    result = case(
        "smollm2",
        "throughput",
        point={"depth": depth},
        params={"prompt_tokens": 64, "gen_tokens": 32},
        metrics=[
            metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, decode, decode),
            metric("throughput.bytes_per_token", Unit.BYTES, 1.05e8),
            metric("throughput.decode_ceiling_tps", Unit.TOKENS_PER_SECOND, ceiling),
            metric("throughput.decode_share", Unit.RATIO, decode / ceiling, decode / ceiling),
        ],
    )
    return with_artifacts(result, bandwidth=BANDWIDTH)


def test_roofline_columns_and_one_bandwidth_line_per_machine() -> None:
    run = make_run([roofline_case(0, 8.5, 125.0), roofline_case(512, 7.7, 102.0)])
    built = performance.build(run)
    assert built is not None
    labels = [c.label for c in built.table.columns]
    assert {"bytes/token (MiB)", "ceiling (tok/s)", "share (x)"} <= set(labels)
    share = labels.index("share (x)")
    assert [row[share].text for row in built.table.rows] == ["0.07 ± 0.00", "0.08 ± 0.00"]
    per_token = labels.index("bytes/token (MiB)")
    assert built.table.rows[0][per_token].text == "100.1"
    assert built.bandwidth == (
        "read bandwidth 13.15 GB/s (gemv; sum 2.90 GB/s), 256 MiB buffer, median of 7; "
        "float32 matmul 61.2 GFLOP/s, cached, machine 0123abcd<b>",
    )


def test_no_bandwidth_line_without_the_artifact() -> None:
    plain = case(
        "m", "throughput", metrics=[metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, 9)]
    )
    built = performance.build(make_run([plain]))
    assert built is not None and built.bandwidth == ()


def quality_case(model: str, reference: str | None) -> CaseResult:
    metrics = [metric("quality.perplexity", Unit.RATIO, 9.0, 11.0)]
    if reference:
        metrics += [
            metric("quality.reference_perplexity", Unit.RATIO, 8.0, 10.0),
            metric("quality.token_agreement", Unit.RATIO, 0.9, 0.8),
            metric("quality.kl_divergence", Unit.RATIO, 0.05, 0.07),
        ]
    result = case(model, "quality", metrics=metrics)
    facts: dict[str, object] = {"items": 2, "text": "public_domain.txt"}
    if reference:
        facts["reference"] = reference
    return with_artifacts(result, **facts)


def test_quality_section() -> None:
    run = make_run(
        [quality_case("smollm2-4bit", "embedded: smollm2-f32"), quality_case("gemma", None)]
    )
    built = quality.build(run)
    assert built is not None
    labels = [c.label for c in built.table.columns]
    assert labels[4:] == [
        "perplexity",
        "reference perplexity",
        "agreement",
        "KL (nats)",
        "n",
    ]
    kl = [row[7].text for row in built.table.rows]
    assert kl == ["0.060 ± 0.014", ""]
    assert built.references == (
        "smollm2-4bit: embedded: smollm2-f32 (2 items of public_domain.txt)",
    )
    assert quality.build(make_run([roofline_case(0, 8.5, 125.0)])) is None


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([0.0, 0.0], 2),
        ([13.1, 48.4], 2),
        ([0.05, 0.07], 3),  # 0.070
        ([2.5e-6, 7.8e-7], 7),  # 0.0000025
        ([1e-12], 9),  # capped
    ],
)
def test_small_quality_figures_keep_two_significant_digits(
    values: list[float], expected: int
) -> None:
    assert quality.significant_scale(Unit.RATIO, values).decimals == expected


def test_report_renders_both_escaped() -> None:
    run = make_run([roofline_case(0, 8.5, 125.0), quality_case("m", "embedded: <script>")])
    html = render_html(run)
    assert "read bandwidth 13.15 GB/s" in html and "0123abcd&lt;b&gt;" in html
    assert "embedded: &lt;script&gt;" in html and "embedded: <script>" not in html
    markdown = render_markdown(run)
    assert "## Quality" in markdown and "read bandwidth 13.15 GB/s" in markdown
    assert "quality.perplexity" not in markdown.split("## Quality", 1)[0].split("## Other")[-1]
