"""Section data: what each section builds from a run (templates only lay it out)."""

from __future__ import annotations

import dataclasses

import pytest
from report_fixtures import GIB, MACHINE, MIB, case, make_run, metric, realistic_run

from harness.core.types import CaseResult, Gate, GateResult, Machine, Status, Unit
from harness.report import failures, header, matrix, memory, performance, unclaimed
from harness.report.contents import default_sections
from harness.report.table import Cell, Table


def column_labels(table: Table) -> list[str]:
    return [c.label for c in table.columns]


def column(table: Table, label: str) -> list[Cell]:
    index = column_labels(table).index(label)
    return [row[index] for row in table.rows]


# ---- compatibility matrix -------------------------------------------------------------------

P = Status.PASSED


@pytest.mark.parametrize(
    ("cases", "text", "note", "css"),
    [
        ([(P, None)], "✅ passed", None, "st-passed"),
        ([(P, None), (P, None)], "✅ passed ×2", None, "st-passed"),
        (
            [(P, None), (Status.FAILED, "too slow"), (P, None)],
            "❌ failed ×1 (of 3)",
            "pp1: too slow",
            "st-failed",
        ),
        ([(Status.SKIPPED, "no tool template")], "⏭ skipped", "no tool template", "st-skipped"),
        (
            [(Status.CRASHED, "signal 9\nKilled"), (Status.TIMED_OUT, "600 s")],
            "💥 crashed ×1 (of 2)",
            "pp0: signal 9",
            "st-crashed",
        ),
        ([(Status.TIMED_OUT, "exceeded 600 s")], "⏱ timed_out", "exceeded 600 s", "st-timed-out"),
        ([(Status.ERRORED, "ImportError: x")], "⛔ errored", "ImportError: x", "st-errored"),
        ([(Status.XFAILED, "known")], "⚠ xfailed", "known", "st-xfailed"),
    ],
)
def test_matrix_cell(
    cases: list[tuple[Status, str | None]], text: str, note: str | None, css: str
) -> None:
    results = [
        case("m", "throughput", status, point={"prompt_tokens": i}, reason=reason)
        for i, (status, reason) in enumerate(cases)
    ]
    cell = matrix.matrix_cell(results)
    assert (cell.text, cell.note, cell.css) == (text, note, css)


def test_matrix_cell_failed_gate_gives_the_reason() -> None:
    gate = GateResult(Gate("throughput.decode_tps", ">=", 5.0), 3.0, False, "decode 3.0 < 5")
    cell = matrix.matrix_cell([case("m", "t", Status.FAILED, gates=(gate,))])
    assert cell.note == "decode 3.0 < 5"


def test_matrix_xfail_link_is_kept_only_if_http() -> None:
    good = matrix.matrix_cell([case("m", "t", Status.XFAILED, reason="r", link="https://x.io/1")])
    bad = matrix.matrix_cell([case("m", "t", Status.XFAILED, reason="r", link="javascript:x")])
    assert good.link == "https://x.io/1" and bad.link is None


def test_matrix_layout() -> None:
    data = matrix.build(realistic_run())
    assert data is not None
    assert column_labels(data.table) == [
        "model",
        "load",
        "throughput",
        "prompt_cache",
        "tool_calls",
    ]
    rows = {row[0].text: row for row in data.table.rows}
    assert rows["phi-3.5-mini-4bit"][1].text == "💥 crashed"
    assert rows["phi-3.5-mini-4bit"][3] is matrix.NOT_RUN
    assert rows["gemma-2-2b-it-4bit"][2].text == "❌ failed ×1 (of 3)"
    assert matrix.build(make_run([])) is None


# ---- performance ----------------------------------------------------------------------------


def test_performance_table() -> None:
    data = performance.build(realistic_run())
    assert data is not None
    table = data.part("speed")
    assert table is not None
    # every row is a throughput case: the scenario is in the title, not a column
    assert [p.title for p in data.parts][:2] == [
        "Speed · throughput",
        "Latency and noise · throughput",
    ]
    assert column_labels(table) == [
        "model",
        "params",
        "status",
        "prefill (tok/s)",
        "decode (tok/s)",
        "TTFT (s)",
        "e2e (s)",
        "n",
    ]
    latency = data.part("latency")
    assert latency is not None
    assert column_labels(latency)[3:] == ["ITL p50 (ms)", "ITL p90 (ms)", "ITL p99 (ms)", "n", "CV"]
    first = table.rows[0]
    assert [c.text for c in first[:3]] == ["llama-3.2-1b-instruct-4bit", "pp128 tg128", "✅ passed"]
    assert " ± " in first[4].text and first[-1].text == "5"
    noise = latency.rows[0][-1].text
    assert noise.startswith("decode ") and " · prefill " in noise


def test_performance_unknown_throughput_metric_gets_a_column() -> None:
    run = make_run(
        [case("m", "t", metrics=[metric("throughput.spec_accept_ratio", Unit.RATIO, 0.5, 0.7)])]
    )
    data = performance.build(run)
    assert data is not None
    more = data.part("more")
    assert more is not None and [p.key for p in data.parts] == ["more"]
    assert column_labels(more)[-2] == "spec accept ratio (x)"
    assert column(more, "spec accept ratio (x)")[0].text == "0.60 ± 0.14"


def _auto_case(decode: tuple[float, ...], stop: dict[str, object] | None) -> CaseResult:
    result = case(
        "m",
        "throughput",
        metrics=[
            metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, *decode),
            metric("throughput.ttft_s", Unit.SECONDS, 0.1, 0.1),
        ],
    )
    return dataclasses.replace(result, artifacts={"repeats": stop} if stop else {})


# (decode samples, the repeats artifact, CV cell text, its note)
NOISE_CELLS = [
    ((90.0, 110.0), None, "decode 14.1%", None),
    ((100.0,), None, "decode —", None),  # one sample: no spread to tell
    (
        (99.0, 100.0, 101.0),
        {"mode": "auto", "taken": 3, "reason": "max repeats 3 reached, ci 4.0%"},
        "decode 1.0%",
        "auto: 3 runs, max repeats 3 reached, ci 4.0%",
    ),
    ((99.0, 101.0), {"mode": "fixed", "taken": 2}, "decode 1.4%", None),
]


@pytest.mark.parametrize(("decode", "stop", "text", "note"), NOISE_CELLS)
def test_performance_cv_column(
    decode: tuple[float, ...], stop: dict[str, object] | None, text: str, note: str | None
) -> None:
    data = performance.build(make_run([_auto_case(decode, stop)]))
    assert data is not None
    speed = data.part("speed")  # no latencies measured: the noise is beside the speed
    assert speed is not None and data.part("latency") is None
    (cell,) = column(speed, "CV")
    assert (cell.text, cell.note) == (text, note)
    assert cell.title is not None and "throughput.ttft_s 0.0%" in cell.title


def test_performance_absent_without_throughput() -> None:
    assert performance.build(make_run([case("m", "load")])) is None


# ---- memory ---------------------------------------------------------------------------------


def test_memory_views_are_labelled_in_mib() -> None:
    data = memory.build(realistic_run())
    assert data is not None
    labels = column_labels(data.table)
    for label in (
        "load (s)",
        "weights (MiB)",
        "MLX after load (MiB)",
        "MLX peak (MiB)",
        "MLX active (MiB)",
        "peak RSS (MiB)",
    ):
        assert label in labels
    weights = [c.text for c in column(data.table, "weights (MiB)") if c.text]
    assert "4198.4" in weights  # 4.1 GiB


def test_memory_switches_to_gib_for_big_models() -> None:
    run = make_run(
        [
            case(
                "big",
                "t",
                metrics=[
                    metric("memory.mlx_peak_bytes", Unit.BYTES, 40 * GIB, view="mlx_peak"),
                    metric("memory.mlx_wired_bytes", Unit.BYTES, 300 * MIB, view="mlx_wired"),
                ],
            )
        ]
    )
    data = memory.build(run)
    assert data is not None
    assert column(data.table, "MLX peak (GiB)")[0].text == "40.00"
    assert column(data.table, "mlx wired (MiB)")[0].text == "300.0"  # labelled by its view


# ---- other metrics --------------------------------------------------------------------------


def test_other_metrics_catch_what_no_section_shows() -> None:
    claims = tuple(c for s in default_sections() for c in s.claims)
    data = unclaimed.build(realistic_run(), claims)
    assert data is not None
    names = {c.text for c in column(data.table, "metric")}
    assert names == {"plugin_draft.acceptance", "plugin_draft.draft_tokens"}  # no section claims
    assert unclaimed.build(make_run([case("m", "t")]), claims) is None


# ---- failures -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gate", "unit", "expected", "measured", "verdict"),
    [
        (
            GateResult(Gate("throughput.decode_tps", ">=", 30.0), 27.4, False, "too slow"),
            Unit.TOKENS_PER_SECOND,
            ">= 30.0 tok/s",
            "27.4 tok/s",
            "❌ failed",
        ),
        (
            GateResult(Gate("throughput.ttft_s", "<=", 0.5), 0.123, True, "ok"),
            Unit.SECONDS,
            "<= 500 ms",
            "123 ms",
            "✅ passed",
        ),
        (
            GateResult(Gate("throughput.decode_tps", ">=", -0.05, relative=True), None, None, "-"),
            Unit.TOKENS_PER_SECOND,
            ">= -5.0% vs baseline",
            "—",
            "not evaluated",
        ),
    ],
)
def test_gate_rows_show_expected_vs_measured(
    gate: GateResult, unit: Unit, expected: str, measured: str, verdict: str
) -> None:
    result = case("m", "t", Status.FAILED, metrics=[metric(gate.gate.metric, unit, 1.0)])
    row = failures.gate_row(result, gate)
    assert [c.text for c in row[1:4]] == [expected, measured, verdict]


def test_failures_order_and_grouping() -> None:
    data = failures.build(realistic_run())
    statuses = [f.status for f in data.problems]
    assert statuses == [
        "💥 crashed",
        "⏱ timed_out",
        "⛔ errored",
        "❌ failed",
        "❌ failed",
        "❗ xpassed",
    ]
    expected = [row[0].text for row in data.expected.rows]
    assert expected == ["⚠ xfailed", "⏭ skipped", "⏭ skipped"]


def test_failures_all_passed() -> None:
    data = failures.build(make_run([case("m", "t")]))
    assert not data.problems and not data.expected.rows and data.total == 1


# ---- header ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("blas", "in_use"),
    [
        ("openblas (preloaded)", "yes"),
        ("openblas (LD_PRELOAD /usr/lib/x86_64-linux-gnu/libopenblas.so.0)", "yes"),
        ("bundled", "no"),
        ("accelerate", "no"),
        ("unknown", "unknown"),
        ("", "unknown"),
    ],
)
def test_openblas_in_use(blas: str, in_use: str) -> None:
    assert header.openblas_in_use(blas) == in_use
    run = make_run([], machine=Machine(**{**MACHINE.__dict__, "blas": blas}))
    rows = dict(header.build(run).machine_rows)
    assert rows["BLAS"].endswith(f"(OpenBLAS in use: {in_use})")


def test_header_counts_and_duration() -> None:
    data = header.build(realistic_run())
    assert data.total == 24 and not data.incomplete
    assert [(c.status, c.count) for c in data.counts][:2] == [("passed", 15), ("skipped", 2)]
    assert data.duration == "3m 25s"
    assert data.problems == 6
    assert header.build(realistic_run(finished=False)).incomplete


def test_no_section_title_is_the_start_of_another() -> None:
    """One word per idea in the report's nav: "Load" beside "Load and memory" read as one."""
    titles = [s.title for s in default_sections()]
    assert len(set(titles)) == len(titles), titles
    clashes = [
        (a, b) for a in titles for b in titles if a != b and b.lower().startswith(a.lower() + " ")
    ]
    assert clashes == []
