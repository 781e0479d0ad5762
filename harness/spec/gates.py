"""Gate expressions: ``">= 5"`` (absolute, in the metric's unit) or ``"-5%"`` (vs baseline).

A gate judges the change, not the noise, on the metric's one
:class:`harness.core.summary.Summary` (median, interval and n over the finite samples; a NaN or
infinite sample is dropped and counted: "median of 4, 1 sample dropped"). Each is decided on an
interval:

- absolute: the 95% interval of the median (order statistics; with fewer than 6 samples the
  range of the samples, which covers the median less often and is wider). It passes when the
  whole interval meets the threshold, fails when none of it does, and only when the interval
  straddles the threshold is it "not evaluated", with about how many samples would decide.
- relative: the 95% bootstrap interval of the change of the median from the baseline. It
  fails when the whole interval is worse than the allowance, passes when none of it is, and is
  "not evaluated" only when the interval straddles the allowance: then the message names the
  noise of each side (baseline and current) and about how many samples a side would decide.
  A 10x drop fails however noisy the baseline was; a timing needs 2 samples a side for an
  interval (a count, such as bytes, is decided on one).
"""

from __future__ import annotations

import math
import re

from harness.core.summary import Summary
from harness.core.types import Gate, GateResult, Metric
from harness.results.significance import TIMED_UNITS, relative_change
from harness.results.stats import bootstrap_ratio_ci, median_noise

MAX_SUGGESTED = 1000  # "about N samples" above this says "more than 1000"

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
    """Check ``gate`` against ``metric`` (and ``baseline`` when relative); ``passed`` None when
    it cannot be judged, with the reason (and what would decide it) in the message."""
    if metric is None or metric.summary.n == 0:
        return GateResult(gate, None, None, f"{gate.metric}: not evaluated: not measured")
    if not gate.relative:
        return _absolute(gate, metric)
    if baseline is None or baseline.summary.n == 0:
        return GateResult(
            gate,
            metric.summary.median,
            None,
            f"{gate.metric} {gate.expression}: not evaluated: no baseline "
            "(give --baseline a run that has this case)",
        )
    return _relative(gate, metric, baseline, higher_is_better)


def _samples_to_decide(n: int, half_width: float, distance: float) -> str:
    """``about 12 samples``: an interval narrows as 1/sqrt(n); what would clear ``distance``."""
    if distance <= 0 or not math.isfinite(half_width):
        return "no number of samples decides it (the median is on the line)"
    needed = max(n + 1, math.ceil(n * (half_width / distance) ** 2) + 1)
    return f"about {needed} samples" if needed <= MAX_SUGGESTED else f"more than {MAX_SUGGESTED}"


def _absolute(gate: Gate, metric: Metric) -> GateResult:
    summary = metric.summary
    measured, unit, n = summary.median, metric.unit.value, summary.n
    low, high = summary.interval
    meets_low = bool(_OPS[gate.op](low, gate.threshold))
    meets_high = bool(_OPS[gate.op](high, gate.threshold))
    interval = f"; 95% interval {low:.4g}..{high:.4g}" if n > 1 else ""
    detail = (
        f"expected {gate.op} {gate.threshold:g} {unit}, measured {measured:.4g} {unit} "
        f"({summary.counted()}{interval})"
    )
    if meets_low and meets_high:
        return GateResult(gate, measured, True, f"{gate.metric} ok: {detail}")
    if not meets_low and not meets_high:
        return GateResult(gate, measured, False, f"{gate.metric} FAILED: {detail}")
    decide = _samples_to_decide(n, (high - low) / 2, abs(measured - gate.threshold))
    message = (
        f"{gate.metric} {gate.expression}: not evaluated: the interval of the median straddles "
        f"the threshold ({detail}); {decide} would decide"
    )
    return GateResult(gate, measured, None, message)


def _side(name: str, summary: Summary) -> str:
    """``baseline ±19.4% n=5``: how uncertain one side's median is (``n=4, 1 dropped`` when a
    sample was NaN or infinite)."""
    noise = median_noise(summary.finite)
    dropped = f", {summary.dropped} dropped" if summary.dropped else ""
    return f"{name} {f'±{noise:.1%} ' if noise is not None else ''}n={summary.n}{dropped}"


def _relative(gate: Gate, metric: Metric, baseline: Metric, higher_is_better: bool) -> GateResult:
    base_sum, cur_sum = baseline.summary, metric.summary
    before, after = base_sum.finite, cur_sum.finite
    measured, unit, allowed = cur_sum.median, metric.unit.value, gate.threshold
    change = relative_change(base_sum.median, measured)
    sides = f"{_side('baseline', base_sum)}, {_side('current', cur_sum)}"
    head = f"{gate.metric} {gate.expression}"
    if metric.unit in TIMED_UNITS and min(len(before), len(after)) < 2:
        message = (
            f"{head}: not evaluated: a timing needs 2 samples a side for an interval "
            f"({change:+.1%}; {sides}); set repeats: 2 or more"
        )
        return GateResult(gate, measured, None, message)
    ratio_low, ratio_high = bootstrap_ratio_ci(before, after)
    if math.isnan(ratio_low) or base_sum.median == 0:
        message = f"{head}: not evaluated: the baseline's median is 0 (no relative change)"
        return GateResult(gate, measured, None, message)
    low, high = ratio_low - 1, ratio_high - 1
    line = -allowed if higher_is_better else allowed  # the worst change allowed
    slack = 1e-9  # a change of exactly the allowance, in floating point, is allowed
    beyond = high < line - slack if higher_is_better else low > line + slack
    within = low >= line - slack if higher_is_better else high <= line + slack
    change_text = f"{change:+.1%} (95% {low:+.1%}..{high:+.1%})"
    detail = (
        f"{change_text} from {base_sum.median:.4g} to {measured:.4g} {unit}, "
        f"allowed {allowed:.1%} worse; {sides}"
    )
    if beyond:
        return GateResult(gate, measured, False, f"{gate.metric} FAILED: {detail}")
    if within:
        return GateResult(gate, measured, True, f"{gate.metric} ok: {detail}")
    decide = _samples_to_decide(
        max(len(before), len(after)), (high - low) / 2, abs((low + high) / 2 - line)
    )
    message = (
        f"{head}: not evaluated: {change_text} straddles the allowed {line:+.1%}; {sides}; "
        f"{decide} a side would decide"
    )
    return GateResult(gate, measured, None, message)
