"""The KV cache sweep section: one row per model, depth and setting (unquantized first), what
a setting saves beside what it costs, its metrics kept out of "Other metrics"."""

from __future__ import annotations

from dataclasses import replace

from report_fixtures import MIB, case, make_run, metric

from harness.core.types import CaseResult, Status, Unit
from harness.report import render_html, render_markdown
from harness.report.table import Table
from harness.scenarios.kv_sweep import section as kv_sweep

# (kv_bits, depth, KV bytes, ratio, decode tok/s, agreement, KL, divergence, status)
ROWS = [
    (4, 4096, 3.0 * MIB, 0.28, 300.0, 1.0, 0.04, 5, Status.FAILED),
    (None, 4096, 96.0 * MIB, 1.0, 400.0, 1.0, 0.0, 16, Status.PASSED),
    (8, 256, 3.4 * MIB, 0.53, 500.0, 1.0, 0.001, 16, Status.PASSED),
    (8, 4096, 51.0 * MIB, 0.53, 380.0, 1.0, 0.002, 16, Status.PASSED),
    (None, 256, 6.0 * MIB, 1.0, 600.0, 1.0, 0.0, 16, Status.PASSED),
]


def _result(
    row: tuple[int | None, int, float, float, float, float, float, int, Status],
) -> CaseResult:
    bits, depth, held, ratio, decode, agreement, kl, at, status = row
    result = case(
        "smollm2",
        "kv_sweep",
        status,
        point={"kv_bits": bits, "context_tokens": depth},
        params={"gen_tokens": 16},
        metrics=(
            metric("kv_sweep.kv_bytes", Unit.BYTES, held),
            metric("kv_sweep.kv_bytes_ratio", Unit.RATIO, ratio),
            metric("kv_sweep.peak_bytes", Unit.BYTES, 700 * MIB, 710 * MIB),
            metric("kv_sweep.prefill_tps", Unit.TOKENS_PER_SECOND, 2000.0, 2100.0),
            metric("kv_sweep.decode_tps", Unit.TOKENS_PER_SECOND, decode, decode + 5),
            metric("kv_sweep.prefill_vs_reference", Unit.RATIO, 0.97, 0.99),
            metric("kv_sweep.decode_vs_reference", Unit.RATIO, 0.8, 0.82),
            metric("kv_sweep.first_token_agreement", Unit.RATIO, agreement),
            metric("kv_sweep.kl", Unit.SCORE, kl),
            metric("kv_sweep.divergence_token", Unit.TOKENS, float(at)),
        ),
        reason="kv_bits 4 changes the answer" if status is Status.FAILED else None,
    )
    return replace(result, artifacts={"context_tokens": depth, "gen_tokens": 16})


def _table() -> Table:
    data = kv_sweep.build(make_run([_result(r) for r in ROWS]))
    assert data is not None
    return data.table


def test_rows_go_by_model_depth_and_setting_unquantized_first() -> None:
    rows = [(r[1].text, r[2].text) for r in _table().rows]
    assert rows == [
        ("256", "none"),
        ("256", "8-bit"),
        ("4096", "none"),
        ("4096", "8-bit"),
        ("4096", "4-bit"),
    ]


def test_one_row_says_what_the_setting_saves_and_costs() -> None:
    table = _table()
    labels = [c.label for c in table.columns]
    assert labels == [
        "model",
        "depth",
        "KV",
        "status",
        "KV cache (MiB)",
        "saved",
        "peak (MiB)",
        "prefill (tok/s)",
        "decode (tok/s)",
        "prefill vs none (x)",
        "decode vs none (x)",
        "first token",
        "KL (nats)",
        "same tokens",
    ]
    four = {c.label: cell for c, cell in zip(table.columns, table.rows[-1], strict=True)}
    assert four["KV cache (MiB)"].text == "3.0"
    assert four["saved"].text == "72%"
    assert four["same tokens"].text == "5/16" and four["same tokens"].css == "st-failed"
    assert four["status"].text == "❌ failed"
    none = {c.label: cell for c, cell in zip(table.columns, table.rows[2], strict=True)}
    assert (none["saved"].text, none["same tokens"].text) == ("0%", "16/16 ✅")


def test_no_kv_sweep_case_no_section() -> None:
    assert kv_sweep.build(make_run([case("m", "throughput")])) is None


def test_the_section_renders_and_claims_its_metrics() -> None:
    run = make_run([_result(r) for r in ROWS])
    markdown = render_markdown(run)
    assert "KV cache sweep" in markdown
    assert "Other metrics" not in markdown
    assert "KV cache sweep" in render_html(run)
