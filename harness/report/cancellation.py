"""Cancellation section: per ``cancellation`` case, how it saw the server stop (its counters or
probes), the known load, and each cancel: tokens read before the hang-up, what was left of the
answer, when the server stopped, the decode steps it ran after the hang-up, and whether the
answers after it equalled the warm control; then each check's verdict, and the cases that did
not pass. Reasons are the scenario's own lines; templates escape them.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.types import CaseResult, RunRecord, Status
from harness.report.formatting import MISSING, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table
from harness.scenarios.cancellation.artifacts import CancellationArtifacts, Trial

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


def _seconds(value: float | None) -> Cell:
    return Cell(MISSING) if value is None else Cell(f"{value:.3f}", sort=value)


def _int(value: int | None) -> Cell:
    return Cell(MISSING) if value is None else Cell(str(value), sort=value)


def _trials(trials: tuple[Trial, ...]) -> Table:
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
    for i, t in enumerate(trials):
        stop = _seconds(t.stop_s)
        if t.stop_s is None and t.watched_s is not None:
            stop = Cell(f"not within {t.watched_s:.1f}", css="fail")
        answer = (
            Cell("unchanged")
            if t.after_same
            else Cell(t.after_error or t.after_differs or "changed", css="fail")
        )
        rows.append(
            (
                Cell(str(i + 1), sort=i + 1),
                _int(t.received_tokens),
                _seconds(t.remaining_s),
                stop,
                _after(t),
                answer,
            )
        )
    return Table(columns, tuple(rows))


def _after(trial: Trial) -> Cell:
    if trial.decoded_after is not None:
        return _int(trial.decoded_after)
    estimate = trial.tokens_after_est
    if estimate is not None:
        return Cell(f"≈{estimate:g}", sort=estimate, title="stop time x the known pace")
    return Cell(MISSING)


def checks_table(result: CaseResult) -> Table:
    """Each of a case's checks (``CaseResult.checks``): its name, verdict and reason."""
    rows = tuple((Cell(c.name), Cell(c.status.value), Cell(c.reason)) for c in result.checks)
    return Table((Column("check"), Column("verdict"), Column("why")), rows)


def _note(found: CancellationArtifacts) -> str:
    parts = [f"engine {found.engine or MISSING}", f"seen by {found.route or MISSING}"]
    known = found.known_load
    if known is not None and known.tokens_per_s is not None:
        parts.append(
            f"known load: {known.tokens} tokens in {known.seconds} s ({known.tokens_per_s:g} tok/s)"
        )
    if found.max_stop_s is not None:
        parts.append(f"bound {found.max_stop_s:g} s")
    if found.cold_warm_drift:
        parts.append(found.cold_warm_drift)
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
    found = [(r, CancellationArtifacts.of(r)) for r in results]
    cases = tuple(
        CancelCase(
            f"{r.model} · {r.case_id.rsplit('::', 1)[-1]}",
            _note(a),
            _trials(a.trials),
            checks_table(r),
        )
        for r, a in found
        if a.trials is not None
    )
    return Cancellations(cases, not_passed_table(results))


SECTION = Section(
    "cancellation", "Cancellation", build, claims=("cancellation.",), order=METRICS + 60
)
