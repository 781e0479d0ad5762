"""Predicted against measured MLX peak, per case: the probe's estimate beside the allocator.

One row per case whose record holds a memory estimate: the policy's decision, the tokens the
estimate was sized for, the predicted and measured MLX peak and the prediction error. The error
is shown only where the estimate was sized for the case's own workload.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.core.preflight_types import PolicyAction, PreflightRecord
from harness.core.types import CaseResult
from harness.report.formatting import MIB, MISSING, Scale
from harness.report.table import Cell, Column, Table, case_cells
from harness.results.preflight_record import MEASURED, PeakCheck, peak_check

BYTES = Scale(MIB, 2, "MiB")

COLUMNS: tuple[Column, ...] = (
    Column("model", css="nowrap"),
    Column("scenario", css="nowrap"),
    Column("params", title="ppN = N prompt tokens, tgN = N generated tokens", css="nowrap"),
    Column("status"),
    Column("policy", title="the probe-and-policy decision before load"),
    Column("context (tokens)", numeric=True, title="prompt + generated tokens estimated for"),
    Column(f"predicted ({BYTES.label})", numeric=True, title="estimated MLX peak"),
    Column(f"measured ({BYTES.label})", numeric=True, title=f"{MEASURED.name} (median)"),
    Column("error", numeric=True, title="(predicted - measured) / measured"),
)


def policy_cell(preflight: PreflightRecord | None) -> Cell:
    if preflight is None or preflight.action is None:
        return Cell(MISSING, title=(preflight.note if preflight else None) or "not judged")
    action = preflight.action
    text = action.value if action is PolicyAction.ALLOW else f"{action.value}: {preflight.code}"
    findings = [f"{f.action.value} {f.code}: {f.message}" for f in preflight.findings]
    return Cell(text, title="\n".join(findings) or None)


def _context_cell(check: PeakCheck) -> Cell:
    title = (
        f"{check.prompt_tokens} prompt + {check.context_tokens - check.prompt_tokens} generated"
        if check.comparable and check.prompt_tokens is not None
        else "the policy's default context (the scenario declares no workload)"
    )
    text = str(check.context_tokens) + ("" if check.comparable else " (default)")
    return Cell(text, sort=check.context_tokens, title=title)


def _bytes_cell(value: float | None, title: str | None = None) -> Cell:
    if value is None:
        return Cell(MISSING, title=title)
    return Cell(BYTES.number(value), sort=value, title=title)


def _error_cell(check: PeakCheck) -> Cell:
    error = check.error
    if error is None:
        why = "not measured" if check.measured_bytes is None else "default context: no workload"
        return Cell(MISSING, title=why)
    return Cell(f"{error:+.1%}", sort=error)


def _component(name: str) -> str:
    return name.removesuffix("_bytes").replace("_", " ")


def prediction_table(results: Sequence[CaseResult]) -> Table:
    rows: list[tuple[Cell, ...]] = []
    for result in results:
        check = peak_check(result)
        if check is None:
            continue
        parts = ", ".join(
            f"{_component(name)} {BYTES.number(value)}" for name, value in check.components.items()
        )
        approx = f"; approximate: {'; '.join(check.approximate)}" if check.approximate else ""
        rows.append(
            (
                *case_cells(result),
                policy_cell(result.preflight),
                _context_cell(check),
                _bytes_cell(check.predicted_bytes, f"{parts} (MiB){approx}"),
                _bytes_cell(check.measured_bytes),
                _error_cell(check),
            )
        )
    return Table(COLUMNS, tuple(rows))
