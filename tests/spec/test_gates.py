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


@pytest.mark.parametrize(
    ("expression", "samples", "baseline", "higher", "passed"),
    [
        (">= 5", (4.0, 6.0, 7.0), None, True, True),  # median 6
        (">= 5", (4.0, 4.5, 9.0), None, True, False),  # median 4.5
        ("< 0.5", (0.4,), None, False, True),
        ("-5%", (96.0,), (100.0,), True, True),  # 4% slower, allowed 5%
        ("-5%", (94.0,), (100.0,), True, False),  # 6% slower
        ("-5%", (106.0,), (100.0,), False, False),  # lower is better: 6% worse
        ("-5%", (94.0,), None, True, None),  # no baseline: not evaluated
    ],
)
def test_evaluate(expression, samples, baseline, higher, passed) -> None:  # type: ignore[no-untyped-def]
    result = evaluate_gate(
        parse_gate("throughput.decode_tps", expression),
        _metric(*samples),
        higher_is_better=higher,
        baseline=_metric(*baseline) if baseline else None,
    )
    assert result.passed is passed
    assert "throughput.decode_tps" in result.message


def test_missing_metric_is_not_evaluated() -> None:
    result = evaluate_gate(parse_gate("x.y", ">= 1"), None)
    assert result.passed is None and "not measured" in result.message
