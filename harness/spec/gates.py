"""Gate expressions: ``">= 5"`` (absolute, in the metric's unit) or ``"-5%"`` (vs baseline).

A relative gate is judged like a comparison: it fails only on a significant change worse than
its allowance; too few samples, or no baseline, leave it "not evaluated" with the reason.
"""

from __future__ import annotations

import math
import re

from harness.results.significance import ALPHA, decide
from harness.types import Gate, GateResult, Metric, Verdict

_ABSOLUTE = re.compile(r"^\s*(>=|<=|==|>|<)\s*([-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*$")
_RELATIVE = re.compile(r"^\s*([-+]?\d+(?:\.\d*)?)\s*%\s*$")
_OPS = {
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    "==": lambda a, b: a == b,
}


class GateSyntaxError(ValueError):
    pass


def parse_gate(metric: str, expression: str) -> Gate:
    """Parse one gate; raise :class:`GateSyntaxError` with a fix hint on bad syntax."""
    text = str(expression)
    match = _ABSOLUTE.match(text)
    if match:
        return Gate(metric, match.group(1), float(match.group(2)), False, text.strip())
    match = _RELATIVE.match(text)
    if match:
        allowed = abs(float(match.group(1))) / 100.0
        return Gate(metric, "within", allowed, True, text.strip())
    raise GateSyntaxError(
        f"gate '{text}' for {metric} is not understood; write e.g. \">= 5\" (absolute) "
        'or "-5%" (at most 5% worse than the baseline)'
    )


def evaluate_gate(
    gate: Gate,
    metric: Metric | None,
    *,
    higher_is_better: bool = True,
    baseline: Metric | None = None,
    alpha: float = ALPHA,
) -> GateResult:
    """Check ``gate`` against the median of ``metric`` (and of ``baseline`` when relative).

    A relative gate follows compare's rule (:func:`harness.results.significance.decide`): it fails
    only when the change is worse than its allowance and significant at ``alpha``; samples that
    cannot decide leave it not evaluated (``passed`` None), with the reason in its message.
    """
    if metric is None or not metric.samples or math.isnan(metric.median):
        return GateResult(gate, None, None, f"{gate.metric}: not evaluated: not measured")
    measured = metric.median
    unit = metric.unit.value
    if not gate.relative:
        passed = bool(_OPS[gate.op](measured, gate.threshold))
        verb = "ok" if passed else "FAILED"
        message = (
            f"{gate.metric} {verb}: expected {gate.op} {gate.threshold:g} {unit}, "
            f"measured {measured:.4g} {unit} (median of {len(metric.samples)})"
        )
        return GateResult(gate, measured, passed, message)
    if baseline is None or not baseline.samples or math.isnan(baseline.median):
        return GateResult(
            gate,
            measured,
            None,
            f"{gate.metric} {gate.expression}: not evaluated: no baseline "
            "(give --baseline a run that has this case)",
        )
    decision = decide(
        baseline.samples,
        metric.samples,
        unit=metric.unit,
        higher_is_better=higher_is_better,
        effect=gate.threshold,
        alpha=alpha,
    )
    detail = (
        f"allowed {gate.threshold:.1%} worse than baseline {baseline.median:.4g} {unit}, "
        f"measured {measured:.4g} {unit} ({decision.change:+.1%}; "
        f"{len(baseline.samples)} vs {len(metric.samples)} samples)"
    )
    if decision.verdict is Verdict.INCONCLUSIVE:
        message = f"{gate.metric} not evaluated: inconclusive ({decision.note}); {detail}"
        return GateResult(gate, measured, None, message)
    if decision.verdict is Verdict.REGRESSED:
        return GateResult(gate, measured, False, f"{gate.metric} FAILED: {detail}; {decision.note}")
    return GateResult(gate, measured, True, f"{gate.metric} ok: {detail}")
