"""The memory section's predicted-vs-measured table, and policy outcomes in the matrix."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from report_fixtures import EVIL, MIB, case, make_run, metric

from harness.core.metrics import MLX_PEAK
from harness.core.preflight_types import (
    ContextSource,
    FindingRecord,
    MemoryRecord,
    PolicyAction,
    PreflightRecord,
)
from harness.core.types import CaseResult, Status, Unit
from harness.report import matrix, memory
from harness.report.memory_prediction import policy_cell
from harness.report.render import render_html, render_markdown
from harness.results.preflight_record import peak_check


def preflight(
    action: str = "allow",
    code: str = "ok",
    message: str = "ok",
    *,
    predicted: int = 12 * MIB,
    context: int = 144,
    prompt: int | None = 128,
    source: str = "scenario",
) -> PreflightRecord:
    findings = () if action == "allow" else (FindingRecord(PolicyAction(action), code, message),)
    return PreflightRecord(
        backend="mlx_lm",
        action=PolicyAction(action),
        code=code,
        message=message,
        findings=findings,
        context_source=ContextSource(source),
        memory=MemoryRecord(
            context_tokens=context,
            prompt_tokens=prompt,
            weights_bytes=predicted // 2,
            kv_cache_bytes=predicted // 4,
            state_bytes=0,
            activation_bytes=predicted - predicted // 2 - predicted // 4,
            mlx_peak_bytes=predicted,
        ),
    )


def result(
    model: str,
    scenario: str = "throughput",
    status: Status = Status.PASSED,
    *,
    measured: float | None = 10 * MIB,
    record: PreflightRecord | None = None,
    reason: str | None = None,
) -> CaseResult:
    metrics = [metric(MLX_PEAK.name, Unit.BYTES, measured)] if measured else []
    base = case(model, scenario, status, point={"prompt_tokens": 128}, metrics=metrics)
    return dataclasses.replace(base, preflight=record, reason=reason)


def _cells(row: tuple[Any, ...]) -> list[str]:
    return [c.text for c in row]


def test_prediction_rows() -> None:
    run = make_run(
        [
            result("a", record=preflight()),  # 12 MiB predicted, 10 measured
            result("a", "load", record=preflight(context=4096, prompt=None, source="default")),
            result(
                "b",
                status=Status.SKIPPED,
                measured=None,
                record=preflight("block", "capability_mismatch", "scenario needs text"),
                reason="capability_mismatch: scenario needs text",
            ),
            result("c", record=preflight("warn", "backend_mismatch", "loaded with mlx-lm")),
            result("old"),  # a run from before the policy step: no record, no row
        ]
    )
    built = memory.build(run)
    assert built is not None
    rows = [_cells(r) for r in built.prediction.rows]
    assert [r[0] for r in rows] == ["a", "a", "b", "c"]
    assert rows[0][4:] == ["allow", "144", "12.00", "10.00", "+20.0%"]
    assert rows[1][4:] == ["allow", "4096 (default)", "12.00", "10.00", "—"]
    assert rows[2][4:] == ["block: capability_mismatch", "144", "12.00", "—", "—"]
    assert rows[3][4] == "warn: backend_mismatch"
    title = built.prediction.rows[0][6].title or ""
    assert "weights 6.00" in title and "kv cache 3.00" in title


def test_peak_check_error_and_comparability() -> None:
    check = peak_check(result("a", record=preflight(predicted=9 * MIB), measured=12 * MIB))
    assert check is not None and check.error == pytest.approx(-0.25)
    default = peak_check(result("a", record=preflight(source="default")))
    assert default is not None and default.error is None and not default.comparable
    assert peak_check(result("a")) is None


def test_both_outputs_show_predicted_measured_and_error() -> None:
    evil = preflight("warn", "backend_mismatch", EVIL)
    run = make_run([result("a", record=preflight()), result("e", record=evil)])
    md, html = render_markdown(run), render_html(run)
    for text in (md, html):
        assert "Predicted vs measured MLX peak" in text and "+20.0%" in text
    assert "<script>alert(1)</script>" not in html  # finding messages are escaped


def test_matrix_shows_a_policy_skip_and_a_policy_warning() -> None:
    skipped = result(
        "vlm",
        status=Status.SKIPPED,
        measured=None,
        record=preflight("block", "backend_mismatch", "mlx-lm cannot load it"),
        reason="backend_mismatch: mlx-lm cannot load it",
    )
    warned = result("v2", record=preflight("warn", "backend_mismatch", "loaded with mlx-lm"))
    assert matrix.matrix_cell([skipped]).note == "backend_mismatch: mlx-lm cannot load it"
    assert matrix.matrix_cell([warned]).note == "warn backend_mismatch: loaded with mlx-lm"
    assert matrix.matrix_cell([result("ok", record=preflight())]).note is None
    run = make_run([skipped, warned])
    md, html = render_markdown(run), render_html(run)
    for text in (md, html):
        assert "backend_mismatch: mlx-lm cannot load it" in text
        assert "warn backend_mismatch: loaded with mlx-lm" in text


@pytest.mark.parametrize(
    ("record", "text", "title"),
    [
        (preflight(), "allow", None),
        (
            preflight("warn", "backend_mismatch", "no vision"),
            "warn: backend_mismatch",
            "warn backend_mismatch: no vision",
        ),
        (PreflightRecord(backend="fake", note="fake has no probe"), "—", "fake has no probe"),
        (None, "—", "not judged"),
    ],
    ids=["allow", "warn", "not_judged_with_note", "no_record"],
)
def test_policy_cell(record: PreflightRecord | None, text: str, title: str | None) -> None:
    cell = policy_cell(record)
    assert (cell.text, cell.title) == (text, title)
