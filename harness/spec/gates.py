"""Gate expressions: ``">= 5"`` (absolute, in the metric's unit) or ``"-5%"`` (vs baseline)."""

from __future__ import annotations

import math
import re

from harness.types import Gate, GateResult, Metric

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
) -> GateResult:
    """Check ``gate`` against the median of ``metric`` (and of ``baseline`` when relative)."""
    if metric is None or not metric.samples or math.isnan(metric.median):
        return GateResult(gate, None, None, f"{gate.metric}: not measured, gate not evaluated")
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
    if baseline is None or not baseline.samples or baseline.median == 0:
        return GateResult(
            gate, measured, None, f"{gate.metric}: no baseline, relative gate not evaluated"
        )
    change = (measured - baseline.median) / abs(baseline.median)
    worse = -change if higher_is_better else change
    passed = worse <= gate.threshold
    message = (
        f"{gate.metric} {'ok' if passed else 'FAILED'}: allowed {gate.threshold:.1%} worse than "
        f"baseline {baseline.median:.4g} {unit}, measured {measured:.4g} {unit} ({change:+.1%})"
    )
    return GateResult(gate, measured, passed, message)
