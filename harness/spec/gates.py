"""Gate expressions: ``">= 5"`` (absolute, in the metric's unit) or ``"-5%"`` (vs baseline).

A relative gate is judged like a comparison: it fails only on a significant change worse than
its allowance; too few samples, or no baseline, leave it "not evaluated" with the reason.

Noise: when the uncertainty of a median (:func:`harness.results.stats.median_noise`, the
half-width of its 95% interval) is larger than what the gate asks to tell apart (a relative
gate's allowance; an absolute gate's distance between the median and its threshold), the
verdict would come from noise: the gate is "not evaluated" and says so. More repeats
(``repeats: auto``) narrow the median's interval.
"""

from __future__ import annotations

import math
import re

from harness.results.significance import ALPHA, decide
from harness.results.stats import coefficient_of_variation, median_noise
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
        margin = abs(measured - gate.threshold) / abs(measured) if measured else math.inf
        noisy = _noise_line(gate, margin, "margin to the gate", metric)
        if noisy is not None:
            detail = f"expected {gate.op} {gate.threshold:g} {unit}, measured {measured:.4g} {unit}"
            return GateResult(gate, measured, None, f"{noisy} ({detail})")
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
    noisy = _noise_line(gate, gate.threshold, "gate", metric, baseline)
    if noisy is not None:
        return GateResult(gate, measured, None, noisy)
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


def _noise_line(gate: Gate, effect: float, what: str, *metrics: Metric) -> str | None:
    """``noise ±12% exceeds the 5% gate: not evaluated (...)`` when the noisiest median of
    ``metrics`` is less certain than ``effect``; None when the gate can be judged."""
    noises = [(median_noise(m.samples), m) for m in metrics]
    known = [(n, m) for n, m in noises if n is not None]
    if not known:
        return None
    noise, worst = max(known, key=lambda pair: pair[0])
    if noise <= effect:
        return None
    cv = coefficient_of_variation(worst.samples) or 0.0
    return (
        f"{gate.metric} {gate.expression}: noise ±{noise:.1%} exceeds the {effect:.1%} {what}: "
        f"not evaluated (95% interval of the median; CV {cv:.1%} over {len(worst.samples)} "
        "samples; more repeats or repeats: auto narrow it)"
    )
