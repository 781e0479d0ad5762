"""The weight quantisation section: the matrix mode x model, one row per model and mode (the
model as loaded first), what a mode saves beside what it costs, the matmul check's failure
marked, its metrics kept out of "Other metrics"."""

from __future__ import annotations

from dataclasses import replace

from report_fixtures import MIB, case, make_run, metric

from harness.core.types import CaseResult, Status, Unit
from harness.report import render_html, render_markdown
from harness.report.charts import build_charts
from harness.report.table import Table
from harness.scenarios.quant_sweep import section as quant_sweep

# (quant, label, weight bytes, ratio, decode tok/s, share, KL, divergence, matmul KL,
#  matmul divergence, status)
ROWS = [
    ("nvfp4", "nvfp4", 80 * MIB, 0.15, 300.0, 0.30, 0.4, 2, 2.3, 0, Status.FAILED),
    ("none", "none", 513 * MIB, 1.0, 100.0, 0.25, 0.0, 16, None, None, Status.PASSED),
    ("affine8", "affine 8-bit g64", 145 * MIB, 0.28, 250.0, 0.3, 0.001, 16, 0.0, 16, Status.PASSED),
    ("mxfp4", "mxfp4", 76 * MIB, 0.14, 320.0, 0.3, 0.3, 3, 1e-7, 16, Status.PASSED),
    ("affine4", "affine 4-bit g64", 90 * MIB, 0.17, 310.0, 0.3, 0.1, 5, 0.0, 16, Status.PASSED),
]


def _result(row: tuple[object, ...]) -> CaseResult:
    quant, label, held, ratio, decode, share, kl, at, mkl, mat, status = row
    assert isinstance(status, Status)
    metrics = [
        metric("quant_sweep.weight_bytes", Unit.BYTES, float(held)),  # type: ignore[arg-type]
        metric("quant_sweep.weight_bytes_ratio", Unit.RATIO, float(ratio)),  # type: ignore[arg-type]
        metric("quant_sweep.prefill_tps", Unit.TOKENS_PER_SECOND, 2000.0, 2100.0),
        metric("quant_sweep.decode_tps", Unit.TOKENS_PER_SECOND, float(decode), float(decode)),  # type: ignore[arg-type]
        metric("quant_sweep.prefill_vs_reference", Unit.RATIO, 0.97, 0.99),
        metric("quant_sweep.decode_vs_reference", Unit.RATIO, 1.8, 1.9),
        metric("quant_sweep.decode_hw_share", Unit.RATIO, float(share), float(share)),  # type: ignore[arg-type]
        metric("quant_sweep.prefill_hw_share", Unit.RATIO, 0.05, 0.05),
        metric("quant_sweep.first_token_agreement", Unit.RATIO, 1.0 if at else 0.0),
        metric("quant_sweep.kl", Unit.SCORE, float(kl)),  # type: ignore[arg-type]
        metric("quant_sweep.divergence_token", Unit.TOKENS, float(at)),  # type: ignore[arg-type]
    ]
    if mkl is not None:
        metrics += [
            metric("quant_sweep.matmul_kl", Unit.SCORE, float(mkl)),  # type: ignore[arg-type]
            metric("quant_sweep.matmul_divergence_token", Unit.TOKENS, float(mat)),  # type: ignore[arg-type]
        ]
    result = case(
        "smollm2",
        "quant_sweep",
        status,
        point={"quant": quant},
        params={"gen_tokens": 16},
        metrics=metrics,
        reason="nvfp4: the quantised matmul disagrees" if status is Status.FAILED else None,
    )
    return replace(result, artifacts={"quant": label, "gen_tokens": 16})


def _table() -> Table:
    data = quant_sweep.build(make_run([_result(r) for r in ROWS]))
    assert data is not None
    return data.table


def test_rows_go_by_model_then_mode_as_loaded_first() -> None:
    assert [r[1].text for r in _table().rows] == [
        "none",
        "affine 8-bit g64",
        "affine 4-bit g64",
        "mxfp4",
        "nvfp4",
    ]


def test_one_row_says_what_the_mode_saves_costs_and_whether_its_matmul_holds() -> None:
    table = _table()
    assert [c.label for c in table.columns] == [
        "model",
        "mode",
        "status",
        "weights (MiB)",
        "saved",
        "prefill (tok/s)",
        "decode (tok/s)",
        "prefill vs none (x)",
        "decode vs none (x)",
        "decode hw share (%)",
        "prefill hw share (%)",
        "first token",
        "KL (nats)",
        "same tokens",
        "matmul KL (nats)",
        "same as twin",
    ]
    nvfp4 = {c.label: cell for c, cell in zip(table.columns, table.rows[-1], strict=True)}
    assert nvfp4["status"].text == "❌ failed"
    assert nvfp4["saved"].text == "85%"
    assert nvfp4["decode hw share (%)"].text.startswith("30.0")
    assert nvfp4["matmul KL (nats)"].text == "2.30"
    assert nvfp4["same as twin"].text == "0/16" and nvfp4["same as twin"].css == "st-failed"
    none = {c.label: cell for c, cell in zip(table.columns, table.rows[0], strict=True)}
    assert (none["saved"].text, none["same tokens"].text) == ("0%", "16/16 ✅")
    assert none["matmul KL (nats)"].text == ""  # no quantised matmul to check


def test_no_quant_sweep_case_no_section() -> None:
    assert quant_sweep.build(make_run([case("m", "throughput")])) is None


def test_the_section_renders_and_claims_its_metrics() -> None:
    run = make_run([_result(r) for r in ROWS])
    markdown = render_markdown(run)
    assert "Weight quantisation" in markdown
    assert "Other metrics" not in markdown
    assert "Weight quantisation" in render_html(run)


def test_a_chart_puts_quality_against_the_bytes_kept_per_mode() -> None:
    charts = {c.key: c for c in build_charts(make_run([_result(r) for r in ROWS]))}
    chart = charts["quant-kl-vs-bytes"]
    assert [item.label for item in chart.legend] == [
        "nvfp4",
        "affine 8-bit g64",
        "mxfp4",
        "affine 4-bit g64",
    ]  # the model as loaded is no point: it keeps every byte, at KL 0
