"""From what a case measured to its status: gates first, then the suite's expectation."""

from __future__ import annotations

from collections.abc import Mapping

from harness.core.check_types import CheckVerdict
from harness.core.metrics import MetricSpec
from harness.core.types import Case, Expectation, ExpectKind, Gate, GateResult, Metric, Status
from harness.results.machine_flags import dirty_line
from harness.runner.check_expectation import judge_checks
from harness.spec.gates import evaluate_gate


def judge(
    case: Case,
    status: Status,
    metrics: tuple[Metric, ...],
    reason: str | None,
    specs: Mapping[str, MetricSpec],
    baseline: Mapping[str, Metric] | None = None,
    dirty: tuple[str, ...] = (),
    checks: tuple[CheckVerdict, ...] = (),
) -> tuple[Status, tuple[GateResult, ...], str | None]:
    """``dirty``: why the case's samples cannot be trusted (the machine was busy, throttled,
    ...): its gates are then not judged, and say why. ``checks``: the case's verdict per check,
    for a known-broken entry that names checks."""
    by_name = {m.name: m for m in metrics}
    gates: tuple[GateResult, ...] = ()
    if status is Status.PASSED and dirty:
        gates = tuple(_not_judged(gate, by_name.get(gate.metric), dirty) for gate in case.gates)
    elif status is Status.PASSED:
        gates = tuple(
            evaluate_gate(
                gate,
                by_name.get(gate.metric),
                higher_is_better=specs[gate.metric].higher_is_better
                if gate.metric in specs
                else True,
                baseline=(baseline or {}).get(gate.metric),
            )
            for gate in case.gates
        )
        failed = [g for g in gates if g.passed is False]
        if failed:
            status = Status.FAILED
            reason = "; ".join(g.message for g in failed)
    expectation = case.expectation
    if expectation is not None and expectation.kind is ExpectKind.XFAIL and expectation.checks:
        status, reason = judge_checks(expectation, status, reason, checks)
        return status, gates, reason
    if expectation is not None and expectation.kind is ExpectKind.XFAIL:
        if status.is_failing:
            return (
                Status.XFAILED,
                gates,
                f"known: {expectation.reason} (got {status.value}: {reason})",
            )
        if status is Status.PASSED and expectation.strict:
            return Status.XPASSED, gates, xpass_message(expectation)
    return status, gates, reason


def _not_judged(gate: Gate, metric: Metric | None, dirty: tuple[str, ...]) -> GateResult:
    measured = metric.median if metric is not None and metric.samples else None
    return GateResult(
        gate,
        measured,
        None,
        f"{gate.metric} {gate.expression}: not judged: {dirty_line(dirty)} "
        "(--allow-dirty-machine judges it anyway)",
    )


def xpass_message(expectation: Expectation) -> str:
    """The one line a strict xfail that passed gets: the ledger entry to remove."""
    entry = f" {expectation.source}" if expectation.source else ""
    return f"XPASS: fixed upstream, remove entry{entry} (expected to fail: {expectation.reason})"
