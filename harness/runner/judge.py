"""From what a case measured to its status: gates first, then the suite's expectation.

Every gate is decided on the metric's one summary (:attr:`harness.core.types.Metric.summary`),
by :func:`harness.spec.gates.evaluate_gate`, with two rules on top:

- a relative gate is judged only against the same point: when the baseline's case cannot be
  compared with this one (``apart``: its params, model files, scenario version or inputs
  changed; the rule compare uses, :func:`harness.results.comparability.not_comparable`), the
  gate is "not evaluated" and says why, never judged against the old point;
- on a dirty machine (busy, throttled, on battery, ...: ``dirty``) load only slows a run: a
  time only grows and a rate only falls. So an absolute gate that passes in the direction load
  works against (a floor on tok/s or req/s, a ceiling on seconds) passes, and says it held on a
  busy machine. Any other gate measured there (a miss, an undecided interval, a relative gate,
  a metric load does not slow that way) is "not judged", with why.

:func:`busy_misses` names the gates of that last kind that a wait for quiet can settle: a miss
or an undecided interval on a machine that was only busy. The run measures such a case
once more once the machine is quiet (:mod:`harness.runner.remeasure`).
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.core.check_types import CheckVerdict
from harness.core.metrics import MetricSpec
from harness.core.types import (
    Case,
    Expectation,
    ExpectKind,
    Gate,
    GateResult,
    Metric,
    Status,
    Unit,
)
from harness.results.machine_flags import busy_only, dirty_line
from harness.runner.check_expectation import judge_checks
from harness.spec.gates import evaluate_gate

# the gates load cannot make pass: per unit, the operators of a bound load works against
# (load makes a time longer and a rate lower, never the other way)
LOAD_PROOF = {
    Unit.SECONDS: frozenset({"<", "<="}),
    Unit.TOKENS_PER_SECOND: frozenset({">", ">="}),
    Unit.REQUESTS_PER_SECOND: frozenset({">", ">="}),
}


def judge(
    case: Case,
    status: Status,
    metrics: tuple[Metric, ...],
    reason: str | None,
    specs: Mapping[str, MetricSpec],
    baseline: Mapping[str, Metric] | None = None,
    dirty: tuple[str, ...] = (),
    apart: tuple[str, ...] = (),
    checks: tuple[CheckVerdict, ...] = (),
    notes: Mapping[Gate, str] | None = None,
) -> tuple[Status, tuple[GateResult, ...], str | None]:
    """``dirty``: why the case's samples cannot be trusted (the machine was busy, throttled,
    ...); ``apart``: why the baseline's case is not comparable with this one (params changed,
    model files changed, ...). See the module's rules. ``checks``: the case's verdict per
    check, for a known-broken entry that names checks. ``notes``: what a gate's message ends
    with (a re-measure once the machine was quiet, :mod:`harness.runner.remeasure`)."""
    by_name = {m.name: m for m in metrics}
    gates: tuple[GateResult, ...] = ()
    if status is Status.PASSED:
        gates = tuple(
            judge_gate(
                gate,
                by_name.get(gate.metric),
                higher_is_better=specs[gate.metric].higher_is_better
                if gate.metric in specs
                else True,
                baseline=(baseline or {}).get(gate.metric),
                dirty=dirty,
                apart=apart,
            )
            for gate in case.gates
        )
        gates = tuple(_noted(g, (notes or {}).get(g.gate)) for g in gates)
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


def judge_gate(
    gate: Gate,
    metric: Metric | None,
    *,
    higher_is_better: bool,
    baseline: Metric | None,
    dirty: tuple[str, ...] = (),
    apart: tuple[str, ...] = (),
) -> GateResult:
    """One gate of a passed case, by the module's rules."""
    if gate.relative and apart and baseline is not None:
        return _apart(gate, metric, apart)
    result = evaluate_gate(gate, metric, higher_is_better=higher_is_better, baseline=baseline)
    if not dirty or _measured(metric) is None:  # nothing measured: that is the reason
        return result
    if result.passed is True and metric is not None and load_proof(gate, metric.unit):
        detail = result.message.removeprefix(f"{gate.metric} ok: ")
        return GateResult(
            gate,
            result.measured,
            True,
            f"{gate.metric} ok on a dirty machine (load only slows a run, so a pass holds): "
            f"{detail}; {dirty_line(dirty)}",
        )
    return _not_judged(gate, metric, dirty)


def busy_misses(
    case: Case,
    status: Status,
    metrics: tuple[Metric, ...],
    specs: Mapping[str, MetricSpec],
    baseline: Mapping[str, Metric] | None = None,
    dirty: tuple[str, ...] = (),
    apart: tuple[str, ...] = (),
) -> tuple[Gate, ...]:
    """The gates of a case measured on a machine that was busy (and nothing else: a wait for
    quiet cannot end a battery or a throttle) that :func:`judge` leaves not judged and that
    miss, or cannot decide, on these samples: what a re-measure on a quiet machine may judge.
    Not a gate whose metric was not measured, a relative gate without a comparable baseline,
    nor a gate whose samples pass (a pass load could have made stays not judged: it is no
    miss)."""
    if status is not Status.PASSED or not busy_only(dirty):
        return ()
    by_name = {m.name: m for m in metrics}
    found = []
    for gate in case.gates:
        metric = by_name.get(gate.metric)
        before = (baseline or {}).get(gate.metric)
        if _measured(metric) is None or (gate.relative and (apart or before is None)):
            continue
        assert metric is not None
        spec = specs.get(gate.metric)
        plain = evaluate_gate(
            gate,
            metric,
            higher_is_better=spec.higher_is_better if spec is not None else True,
            baseline=before,
        )
        if plain.passed is not True:
            found.append(gate)
    return tuple(found)


def load_proof(gate: Gate, unit: Unit) -> bool:
    """Whether a pass of ``gate`` on a metric in ``unit`` holds however loaded the machine was:
    an absolute floor on a rate or ceiling on a time (load only slows a run)."""
    return not gate.relative and gate.op in LOAD_PROOF.get(unit, frozenset())


def _noted(result: GateResult, note: str | None) -> GateResult:
    if not note:
        return result
    return GateResult(result.gate, result.measured, result.passed, f"{result.message}; {note}")


def _measured(metric: Metric | None) -> float | None:
    return metric.summary.median if metric is not None and metric.summary.n else None


def _apart(gate: Gate, metric: Metric | None, apart: tuple[str, ...]) -> GateResult:
    return GateResult(
        gate,
        _measured(metric),
        None,
        f"{gate.metric} {gate.expression}: not evaluated: the baseline's case is not "
        f"comparable ({'; '.join(apart)}); a relative gate is judged against the same point only",
    )


def _not_judged(gate: Gate, metric: Metric | None, dirty: tuple[str, ...]) -> GateResult:
    if gate.relative:
        why = "a relative gate is not judged on samples taken there"
    elif metric is not None and load_proof(gate, metric.unit):
        why = "a miss or an undecided interval there may be the load's"
    else:
        why = "only a floor on a rate or a ceiling on a time that passes is judged there"
    return GateResult(
        gate,
        _measured(metric),
        None,
        f"{gate.metric} {gate.expression}: not judged: {dirty_line(dirty)}; {why} "
        "(--allow-dirty-machine judges it anyway)",
    )


def xpass_message(expectation: Expectation) -> str:
    """The one line a strict xfail that passed gets: the ledger entry to remove."""
    entry = f" {expectation.source}" if expectation.source else ""
    return f"XPASS: fixed upstream, remove entry{entry} (expected to fail: {expectation.reason})"
