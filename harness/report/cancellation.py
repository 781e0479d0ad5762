"""Cancellation section: per ``cancellation`` case, how it saw the server stop (its counters or
probes), the known load, and each cancel: tokens read before the hang-up, what was left of the
answer, when the server stopped, the decode steps it ran after the hang-up, and whether the
answers after it equalled the warm control; then each check's verdict, and the cases that did
not pass. Reasons are the scenario's own lines; templates escape them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.core.types import CaseResult, RunRecord, Status
from harness.report.formatting import MISSING, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table

SCENARIO = "cancellation"


@dataclass(frozen=True)
class CancelCase:
    title: str
    note: str
    trials: Table
    checks: Table


@dataclass(frozen=True)
class Cancellations:
    cases: tuple[CancelCase, ...]
    not_passed: Table


def _seconds(value: Any) -> Cell:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Cell(f"{value:.3f}", sort=float(value))
    return Cell(MISSING)


def _int(value: Any) -> Cell:
    if isinstance(value, int) and not isinstance(value, bool):
        return Cell(str(value), sort=value)
    return Cell(MISSING)


def _trials(result: CaseResult) -> Table:
    trials = result.artifacts.get("trials")
    columns = (
        Column("cancel", numeric=True),
        Column("tokens read", numeric=True, title="tokens the client read before hanging up"),
        Column("left (s)", numeric=True, title="the abandoned answer's remaining tokens, timed"),
        Column(
            "stopped after (s)", numeric=True, title="from the hang-up until the server stopped"
        ),
        Column(
            "tokens after",
            numeric=True,
            title="decode steps by the server's counters; else ≈ the stop time at the known pace",
        ),
        Column("next answer"),
    )
    rows = []
    for i, t in enumerate(trials if isinstance(trials, list) else []):
        if not isinstance(t, Mapping):
            continue
        stop = _seconds(t.get("stop_s"))
        if t.get("stop_s") is None and isinstance(t.get("watched_s"), (int, float)):
            stop = Cell(f"not within {t['watched_s']:.1f}", css="fail")
        same = t.get("after_same")
        answer = (
            Cell("unchanged")
            if same
            else Cell(str(t.get("after_error") or t.get("after_differs") or "changed"), css="fail")
        )
        rows.append(
            (
                Cell(str(i + 1), sort=i + 1),
                _int(t.get("received_tokens")),
                _seconds(t.get("remaining_s")),
                stop,
                _after(t),
                answer,
            )
        )
    return Table(columns, tuple(rows))


def _after(trial: Mapping[str, Any]) -> Cell:
    if isinstance(trial.get("decoded_after"), int):
        return _int(trial["decoded_after"])
    estimate = trial.get("tokens_after_est")
    if isinstance(estimate, (int, float)) and not isinstance(estimate, bool):
        return Cell(f"≈{estimate:g}", sort=float(estimate), title="stop time x the known pace")
    return Cell(MISSING)


def checks_table(result: CaseResult) -> Table:
    """Each check of a case's ``checks`` artifact: its name, verdict and reason."""
    checks = result.artifacts.get("checks")
    rows = tuple(
        (Cell(str(c.get("name"))), Cell(str(c.get("status"))), Cell(str(c.get("reason", ""))))
        for c in (checks if isinstance(checks, list) else [])
        if isinstance(c, Mapping)
    )
    return Table((Column("check"), Column("verdict"), Column("why")), rows)


def _note(result: CaseResult) -> str:
    a = result.artifacts
    parts = [f"engine {a.get('engine', MISSING)}", f"seen by {a.get('route', MISSING)}"]
    known = a.get("known_load")
    if isinstance(known, Mapping) and isinstance(known.get("tokens_per_s"), (int, float)):
        parts.append(
            f"known load: {known.get('tokens')} tokens in {known.get('seconds')} s "
            f"({known['tokens_per_s']:g} tok/s)"
        )
    if isinstance(a.get("max_stop_s"), (int, float)):
        parts.append(f"bound {a['max_stop_s']:g} s")
    if a.get("cold_warm_drift"):
        parts.append(str(a["cold_warm_drift"]))
    return "; ".join(parts)


def not_passed_table(results: list[CaseResult]) -> Table:
    rows = tuple(
        (
            Cell(r.model),
            Cell(r.case_id.rsplit("::", 1)[-1]),
            Cell(status_label(r.status), css=status_css(r.status)),
            Cell(r.reason or MISSING),
        )
        for r in results
        if r.status is not Status.PASSED
    )
    return Table((Column("model"), Column("case"), Column("status"), Column("why")), rows)


def build(run: RunRecord) -> Cancellations | None:
    results = sorted(
        (r for r in run.results if r.scenario == SCENARIO), key=lambda r: (r.model, r.case_id)
    )
    if not results:
        return None
    cases = tuple(
        CancelCase(
            f"{r.model} · {r.case_id.rsplit('::', 1)[-1]}", _note(r), _trials(r), checks_table(r)
        )
        for r in results
        if isinstance(r.artifacts.get("trials"), list)
    )
    return Cancellations(cases, not_passed_table(results))


SECTION = Section(
    "cancellation", "Cancellation", build, claims=("cancellation.",), order=METRICS + 60
)
