"""The performance section's roofline columns, ceiling lines (the hardware's, and an older
record's MLX kernel figure) and "ceiling invalid" cells, and the quality section."""

from __future__ import annotations

import dataclasses
import json

import pytest
from report_fixtures import case, make_run, metric

from harness.core.types import CaseResult, Unit
from harness.report import performance, quality
from harness.report.render import render_html, render_markdown
from harness.results.codec import decode_event, to_json
from harness.results.migrations import migrated

BANDWIDTH = {  # an older record's figure: MLX's own kernels, median of 7
    "bytes_per_s": 13.15e9,
    "kernel": "gemv",
    "kernels_bytes_per_s": {"sum": 2.9e9, "gemv": 13.15e9},
    "buffer_bytes": 256 * 2**20,
    "repeats": 7,
    "flops_per_s": 61.25e9,
    "fingerprint": "0123abcd<b>",
    "source": "cached",
}


HARDWARE = {  # the hardware's ceiling, as the throughput scenario records it now
    "format": 3,
    "statistic": "best",
    "bytes_per_s": 29.81e9,
    "kernel": "numpy_gemv",
    "kernels_bytes_per_s": {
        "numpy_sum": 15.0e9,
        "numpy_sum_threads": 26.1e9,
        "numpy_gemv": 29.81e9,
    },
    "mlx_kernels_bytes_per_s": {"gemv": 6.1e9, "sum": 4.5e9},
    "flops_per_s": 140.7e9,
    "flops_kernel": "numpy_sgemm",
    "flops_kernels_per_s": {"numpy_sgemm": 140.7e9, "mlx_matmul": 5.1e9},
    "device": "cpu",
    "threads": 2,
    "buffer_bytes": 256 * 2**20,
    "bursts": 9,
    "conditions": {
        "load_average": [1.95, 1.5, 1.2],
        "others_cpu_share": 0.47,
        "busy_processes": [{"name": "python<i>", "cpu_percent": 45.0}],
        "cpu_count": 2,
        "wall_s": 3.2,
    },
    "fingerprint": "b6e45068c11759e8",
    "machine": {},
    "measured_unix_s": 1795723968.0,  # 2026-11-26 20:12 UTC
    "reason": "no cached figure of this format for this machine",
    "measured_in": "child",
    "source": "measured",
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
            metric("throughput.decode_hw_ceiling_tps", Unit.TOKENS_PER_SECOND, ceiling),
            metric("throughput.decode_hw_share", Unit.RATIO, decode / ceiling, decode / ceiling),
        ],
    )
    return with_artifacts(result, bandwidth=BANDWIDTH)


def test_roofline_columns_and_one_bandwidth_line_per_machine() -> None:
    run = make_run([roofline_case(0, 8.5, 125.0), roofline_case(512, 7.7, 102.0)])
    built = performance.build(run)
    assert built is not None
    roofline, memory = built.part("roofline"), built.part("memory")
    assert roofline is not None and memory is not None
    labels = [c.label for c in roofline.columns]
    assert {"ceiling (tok/s)", "share (x)"} <= set(labels)
    share = labels.index("share (x)")
    assert [row[share].text for row in roofline.rows] == ["0.07 ± 0.00", "0.08 ± 0.00"]
    per_token = [c.label for c in memory.columns].index("bytes/token (MiB)")
    assert memory.rows[0][per_token].text == "100.1"
    assert built.bandwidth == (
        "read bandwidth 13.15 GB/s by MLX's own gemv kernel (sum 2.90 GB/s), 256 MiB buffer, "
        "median of 7; float32 matmul 61.2 GFLOP/s, cached, machine 0123abcd<b>: an older "
        "record, whose ceiling is MLX's kernel speed, not the hardware's",
    )


def test_the_hardware_ceiling_line_says_what_how_and_when() -> None:
    result = with_artifacts(roofline_case(0, 8.5, 125.0), bandwidth=HARDWARE)
    built = performance.build(make_run([result]))
    assert built is not None
    assert built.bandwidth == (
        "memory read ceiling 29.81 GB/s (numpy_gemv; numpy_sum 15.00 GB/s, numpy_sum_threads "
        "26.10 GB/s), best of 9 bursts over a 256 MiB buffer on cpu, 2 threads; MLX's own "
        "kernels (kernel efficiency, not the ceiling): gemv 6.10 GB/s, sum 4.50 GB/s; float32 "
        "matmul ceiling 140.7 GFLOP/s (numpy_sgemm; mlx_matmul 5.1 GFLOP/s); measured "
        "2026-11-26 20:12 UTC (no cached figure of this format for this machine), measured; "
        "load average 1.95, other processes 47% of the CPUs (python<i> 45.0%); "
        "machine b6e45068c11759e8",
    )


def test_one_line_per_measurement_a_remeasured_figure_included() -> None:
    later = {**HARDWARE, "measured_unix_s": HARDWARE["measured_unix_s"] + 60.0}  # type: ignore[operator]
    run = make_run(
        [
            with_artifacts(roofline_case(0, 8.5, 125.0), bandwidth=HARDWARE),
            with_artifacts(roofline_case(64, 8.5, 125.0), bandwidth=HARDWARE),
            with_artifacts(roofline_case(128, 8.5, 125.0), bandwidth=later),
        ]
    )
    built = performance.build(run)
    assert built is not None and len(built.bandwidth) == 2


def share_case(
    shares: tuple[float, ...],
    bandwidth: dict[str, object],
    *,
    named: tuple[str, str] = ("throughput.decode_hw_ceiling_tps", "throughput.decode_hw_share"),
    **artifacts: object,
) -> CaseResult:
    ceiling, share = named
    metrics = [
        metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, 14.0, 14.2),
        metric(ceiling, Unit.TOKENS_PER_SECOND, 13.0),
    ]
    if shares:
        metrics.append(metric(share, Unit.RATIO, *shares))
    result = case("smollm2-f32", "throughput", params={"prompt_tokens": 128}, metrics=metrics)
    return with_artifacts(result, bandwidth=bandwidth, **artifacts)


OLDER_NAMES = ("throughput.decode_ceiling_tps", "throughput.decode_share")  # a version-1 record's


def loaded_as_version_1(result: CaseResult) -> CaseResult:
    """``result`` as the loader gives it from a record of version 1 (migrated)."""
    line = json.dumps({"result": migrated(to_json(result), 1)})
    loaded: CaseResult = decode_event("case", line)["result"]
    return loaded


INVALID_NEW = {"decode": {"max_share": 1.07, "reason": "a decode run passed it (107%)"}}


@pytest.mark.parametrize(
    ("result", "shown", "why"),
    [
        (share_case((0.27, 0.28), HARDWARE), "0.28 ± 0.01", None),
        (share_case((1.0, 1.0), HARDWARE), "1.00 ± 0.00", None),  # at the ceiling, not past it
        (share_case((1.07, 1.15), BANDWIDTH), "ceiling invalid", "MLX's kernel speed"),
        (share_case((0.9, 1.02), BANDWIDTH), "ceiling invalid", "102%"),
        (share_case((), HARDWARE, ceiling_invalid=INVALID_NEW), "ceiling invalid", "(107%)"),
        (
            loaded_as_version_1(share_case((1.07, 1.15), BANDWIDTH, named=OLDER_NAMES)),
            "ceiling invalid",
            "kernel",
        ),
    ],
    ids=[
        "valid",
        "at-the-ceiling",
        "older-record",
        "one-run-over",
        "recorded-invalid",
        "older-names",
    ],
)
def test_a_share_above_100_percent_reads_ceiling_invalid(
    result: CaseResult, shown: str, why: str | None
) -> None:
    built = performance.build(make_run([result]))
    assert built is not None
    roofline = built.part("roofline")
    assert roofline is not None
    labels = [c.label for c in roofline.columns]
    cell = roofline.rows[0][labels.index("share (x)")]
    assert cell.text == shown
    assert why is None or why in str(cell.title)
    assert labels[-1] == "n"
    assert roofline.rows[0][labels.index("n")].text == "1–2"  # the ceiling: one sample
    speed = built.part("speed")  # no ITL measured: no latency table, the CV beside the speed
    assert built.part("latency") is None
    assert speed is not None and [c.label for c in speed.columns][-2:] == ["n", "CV"]


def test_ceiling_invalid_in_both_renderings_never_the_share() -> None:
    run = make_run(
        [
            share_case((1.07, 1.15), BANDWIDTH),
            share_case((), HARDWARE, ceiling_invalid=INVALID_NEW),
        ]
    )
    for text in (render_html(run), render_markdown(run)):
        performance_part = text.split("Performance", 1)[1]
        assert performance_part.count("ceiling invalid") >= 2
        assert "1.07" not in text and "1.11" not in text


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
