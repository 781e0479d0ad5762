from __future__ import annotations

import pytest

from harness.spec.gates import GateSyntaxError, evaluate_gate, parse_gate
from harness.types import Metric, Unit


@pytest.mark.parametrize(
    ("expression", "op", "threshold", "relative"),
    [
        (">= 5", ">=", 5.0, False),
        ("<0.25", "<", 0.25, False),
        ("== 3", "==", 3.0, False),
        ("> 1e3", ">", 1000.0, False),
        ("-5%", "within", 0.05, True),
        ("10 %", "within", 0.1, True),
    ],
)
def test_parse(expression: str, op: str, threshold: float, relative: bool) -> None:
    gate = parse_gate("throughput.decode_tps", expression)
    assert (gate.op, gate.threshold, gate.relative) == (op, threshold, relative)


@pytest.mark.parametrize("expression", ["fast", ">=", "5", "=> 5", "%"])
def test_parse_rejects(expression: str) -> None:
    with pytest.raises(GateSyntaxError, match=r"write e\.g\."):
        parse_gate("m", expression)


def _metric(*values: float) -> Metric:
    return Metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, values)


def _five(median: float) -> tuple[float, ...]:
    """Five samples around ``median`` with a 0.2% spread: enough for the test to decide."""
    return tuple(median * (1 + d) for d in (-0.002, -0.001, 0.0, 0.001, 0.002))


def _spread(median: float, width: float) -> tuple[float, ...]:
    """Six samples around ``median``, ``width`` apart relative to it."""
    return tuple(median * (1 + width * d) for d in (-1.0, -0.6, -0.2, 0.2, 0.6, 1.0))


@pytest.mark.parametrize(
    ("expression", "samples", "baseline", "higher", "passed", "says"),
    [
        (">= 5", (5.9, 6.0, 6.1), None, True, True, "ok: expected >= 5"),  # median 6
        (">= 5", (4.4, 4.5, 4.6), None, True, False, "FAILED: expected >= 5"),  # median 4.5
        # the median is less certain than its distance to the threshold: noise decides
        (">= 5", (4.0, 6.0, 7.0), None, True, None, "noise ±38.2% exceeds the 16.7% margin"),
        (">= 5", (4.0, 4.5, 9.0), None, True, None, "not evaluated (95% interval"),
        ("< 0.5", (0.4,), None, False, True, "ok"),
        ("-5%", _five(96.0), _five(100.0), True, True, "ok: allowed 5.0% worse"),  # 4% slower
        ("-5%", _five(94.0), _five(100.0), True, False, "FAILED: allowed 5.0% worse"),
        ("-5%", _five(106.0), _five(100.0), False, False, "FAILED"),  # lower is better: worse
        ("-5%", _five(120.0), _five(100.0), True, True, "ok"),  # better is never a failure
        ("-5%", _five(94.0), None, True, None, "-5%: not evaluated: no baseline"),
        # 3 a side can never be significant (smallest p 0.1), whatever the change
        ("-5%", _five(47.0)[:3], _five(100.0)[:3], True, None, "inconclusive (needs n >= 4"),
        ("-5%", _five(99.0)[:3], _five(100.0)[:3], True, None, "inconclusive (needs n >= 4"),
        ("-5%", (94.0,), (100.0,), True, None, "not evaluated: inconclusive (needs n >= 4"),
        # worse than allowed but not significant: the samples overlap too much to decide
        ("-5%", _spread(94.0, 0.06), _spread(100.0, 0.06), True, None, "p=0."),
        # noisier than the gate's allowance: not judged on noise, whatever the medians say
        ("-5%", (60.0, 95, 88, 130, 80), (100.0, 70, 120, 90, 110), True, None, "noise ±"),
        ("-5%", _spread(80.0, 0.2), _five(100.0), True, None, "exceeds the 5.0% gate"),
    ],
)
def test_evaluate(expression, samples, baseline, higher, passed, says) -> None:  # type: ignore[no-untyped-def]
    result = evaluate_gate(
        parse_gate("throughput.decode_tps", expression),
        _metric(*samples),
        higher_is_better=higher,
        baseline=_metric(*baseline) if baseline else None,
    )
    assert result.passed is passed
    assert result.message.startswith("throughput.decode_tps")
    assert says in result.message


@pytest.mark.parametrize(
    ("before", "after", "passed"),
    [
        ((1000.0,), (1000.0,), True),  # identical bytes
        ((1000.0,), (1040.0,), True),  # 4% more, 5% allowed
        ((1000.0,), (1070.0,), None),  # 7%: over the allowance, under 10%: no test possible
        ((1000.0,), (1300.0,), False),  # a count that moved 30% fails without a test
    ],
)
def test_relative_gate_on_one_counted_sample(
    before: tuple[float, ...], after: tuple[float, ...], passed: bool | None
) -> None:
    mem = lambda v: Metric("memory.mlx_peak_bytes", Unit.BYTES, v)  # noqa: E731
    gate = parse_gate("memory.mlx_peak_bytes", "-5%")
    result = evaluate_gate(gate, mem(after), higher_is_better=False, baseline=mem(before))
    assert result.passed is passed, result.message


def test_missing_metric_is_not_evaluated() -> None:
    result = evaluate_gate(parse_gate("x.y", ">= 1"), None)
    assert result.passed is None and "not evaluated: not measured" in result.message
