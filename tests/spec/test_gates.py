from __future__ import annotations

import math

import pytest

from harness.core.types import Metric, Unit
from harness.spec.gates import GateSyntaxError, _samples_to_decide, evaluate_gate, parse_gate


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


def _noisy(median: float) -> tuple[float, ...]:
    """Five samples around ``median`` spread +-20%: a busy machine's baseline."""
    return tuple(median * (1 + d) for d in (-0.2, -0.1, 0.0, 0.1, 0.2))


@pytest.mark.parametrize(
    ("expression", "samples", "baseline", "higher", "passed", "says"),
    [
        (">= 5", (5.9, 6.0, 6.1), None, True, True, "ok: expected >= 5"),  # all of it >= 5
        (">= 5", (4.4, 4.5, 4.6), None, True, False, "FAILED: expected >= 5"),  # none of it
        # the interval of the median straddles the threshold: not judged, with what would be
        (">= 5", (4.0, 6.0, 7.0), None, True, None, "straddles the threshold"),
        (">= 5", (4.0, 4.5, 9.0), None, True, None, "samples would decide"),
        (">= 5", (5.0, 5.0, 5.0), None, True, True, "ok"),  # on the line, >=: met
        ("> 5", (5.0, 5.0, 5.0), None, True, False, "FAILED"),  # on the line, >: not met
        ("< 0.5", (0.4,), None, False, True, "ok"),  # one sample: the point
        ("<= 0.5", (0.5,), None, False, True, "ok"),
        ("-5%", _five(96.0), _five(100.0), True, True, "ok: -4.0%"),  # 4% slower, 5% allowed
        ("-5%", _five(94.0), _five(100.0), True, False, "FAILED: -6.0%"),
        ("-5%", _five(106.0), _five(100.0), False, False, "FAILED"),  # lower is better: worse
        ("-5%", _five(104.0), _five(100.0), False, True, "ok"),
        ("-5%", _five(120.0), _five(100.0), True, True, "ok"),  # better is never a failure
        ("+5%", _five(94.0), _five(100.0), True, False, "FAILED"),  # the sign is not a direction
        ("-5%", _five(94.0), None, True, None, "-5%: not evaluated: no baseline"),
        # 3 a side: the interval decides when it is clear of the allowance
        ("-5%", _five(47.0)[:3], _five(100.0)[:3], True, False, "FAILED: -53.0%"),
        ("-5%", _five(99.0)[:3], _five(100.0)[:3], True, True, "ok: -1.0%"),
        # a 10x drop against a noisy baseline fails: the change is far beyond the noise
        ("-10%", _five(10.0), _noisy(85.0), True, False, "FAILED: -88.2%"),
        ("-10%", _five(10.0), _noisy(85.0), True, False, "baseline ±"),
        # one timing sample a side: no interval, never judged on it
        ("-5%", (94.0,), (100.0,), True, None, "needs 2 samples a side"),
        # worse than allowed, but the samples overlap too much to say by how much
        ("-5%", _spread(94.0, 0.06), _spread(100.0, 0.06), True, None, "straddles the allowed -5"),
        ("-5%", (60.0, 95, 88, 130, 80), (100.0, 70, 120, 90, 110), True, None, "current ±"),
        ("-5%", _spread(80.0, 0.2), _five(100.0), True, False, "FAILED: -20.0%"),  # noisy, clear
        ("-5%", _spread(90.0, 0.2), _five(100.0), True, None, "a side would decide"),
        ("-5%", _five(94.0), (0.0, 0.0, 0.0), True, None, "baseline's median is 0"),
    ],
)
def test_evaluate(expression, samples, baseline, higher, passed, says) -> None:  # type: ignore[no-untyped-def]
    gate = parse_gate("throughput.decode_tps", expression)
    measured = _metric(*samples)
    result = evaluate_gate(
        gate,
        measured,
        higher_is_better=higher,
        baseline=_metric(*baseline) if baseline else None,
    )
    assert result.passed is passed, result.message
    assert result.message.startswith("throughput.decode_tps")
    assert says in result.message, result.message
    assert result.gate is gate and result.measured == measured.median


NAN = float("nan")


@pytest.mark.parametrize(
    ("expression", "samples", "baseline", "message"),
    [
        # what would decide: the interval narrows as 1/sqrt(n); these pin the arithmetic
        (
            ">= 5",
            (4.0, 6.0, 7.0),
            None,
            "throughput.decode_tps >= 5: not evaluated: the interval of the median straddles the "
            "threshold (expected >= 5 tok/s, measured 6 tok/s (median of 3; 95% interval 4..7)); "
            "about 8 samples would decide",
        ),
        (
            "-5%",
            _spread(90.0, 0.1),
            _spread(100.0, 0.1),
            "throughput.decode_tps -5%: not evaluated: -10.0% (95% -20.2%..+0.0%) straddles the "
            "allowed -5.0%; baseline ±7.5% n=6, current ±7.5% n=6; about 25 samples a side would "
            "decide",
        ),
        # two timing samples a side make an interval: judged, not "needs 2 samples"
        (
            "-5%",
            (94.0, 95.0),
            (100.0, 101.0),
            "throughput.decode_tps -5%: not evaluated: -6.0% (95% -6.9%..-5.0%) straddles the "
            "allowed -5.0%; baseline ±1.2% n=2, current ±1.3% n=2; about 3 samples a side would "
            "decide",
        ),
        # a baseline of exactly 1 is a baseline, not "0"
        (
            "-5%",
            (0.5, 0.5, 0.5),
            (1.0, 1.0, 1.0),
            "throughput.decode_tps FAILED: -50.0% (95% -50.0%..-50.0%) from 1 to 0.5 tok/s, "
            "allowed 5.0% worse; baseline ±0.0% n=3, current ±0.0% n=3",
        ),
        (
            ">= 5",
            (6.0,),
            None,
            "throughput.decode_tps ok: expected >= 5 tok/s, measured 6 tok/s (median of 1)",
        ),
        (">= 5", (NAN, NAN), None, "throughput.decode_tps: not evaluated: not measured"),
        (
            ">= 5",
            (6.0, 7.0),
            None,
            "throughput.decode_tps ok: expected >= 5 tok/s, measured 6.5 tok/s (median of 2; "
            "95% interval 6..7)",
        ),
        (
            "-5%",
            (9.0, 9.0),
            (NAN, NAN),
            "throughput.decode_tps -5%: not evaluated: no baseline "
            "(give --baseline a run that has this case)",
        ),
    ],
)
def test_the_whole_message(
    expression: str, samples: tuple[float, ...], baseline: tuple[float, ...] | None, message: str
) -> None:
    gate = parse_gate("throughput.decode_tps", expression)
    result = evaluate_gate(
        gate, _metric(*samples), baseline=_metric(*baseline) if baseline else None
    )
    assert result.message == message and result.gate is gate


@pytest.mark.parametrize(
    ("n", "half_width", "distance", "says"),
    [
        (5, 0.1, 0.05, "about 21 samples"),  # 5 * (0.1 / 0.05)^2 = 20, and one more
        (5, 0.01, 0.05, "about 6 samples"),  # already narrow enough: at least one more sample
        (999, 0.0001, 1.0, "about 1000 samples"),
        (1000, 0.0001, 1.0, "more than 1000"),
        (5, 0.1, 0.0, "no number of samples decides it (the median is on the line)"),
        (5, math.inf, 0.1, "no number of samples decides it (the median is on the line)"),
    ],
)
def test_samples_that_would_decide(n: int, half_width: float, distance: float, says: str) -> None:
    assert _samples_to_decide(n, half_width, distance) == says


def test_a_gate_keeps_its_expression() -> None:
    assert parse_gate("m", " >= 5 ").expression == ">= 5"
    assert parse_gate("m", "-5%").expression == "-5%"
    with pytest.raises(GateSyntaxError) as info:
        parse_gate("m", "fast")
    assert 'or "-5%" (at most 5% worse than the baseline)' in str(info.value)


@pytest.mark.parametrize(
    ("before", "after", "passed"),
    [
        ((1000.0,), (1000.0,), True),  # identical bytes
        ((1000.0,), (1040.0,), True),  # 4% more, 5% allowed
        ((1000.0,), (1050.0,), True),  # at the allowance: allowed
        ((1000.0,), (1070.0,), False),  # a count is decided on one sample: 7% is beyond 5%
        ((1000.0,), (1300.0,), False),
    ],
)
def test_relative_gate_on_one_counted_sample(
    before: tuple[float, ...], after: tuple[float, ...], passed: bool | None
) -> None:
    mem = lambda v: Metric("memory.mlx_peak_bytes", Unit.BYTES, v)  # noqa: E731
    gate = parse_gate("memory.mlx_peak_bytes", "-5%")
    result = evaluate_gate(gate, mem(after), higher_is_better=False, baseline=mem(before))
    assert result.passed is passed, result.message


def test_the_samples_that_would_decide_grow_as_the_change_nears_the_allowance() -> None:
    import re

    def needed(median: float) -> int:
        gate = parse_gate("throughput.decode_tps", "-5%")
        result = evaluate_gate(
            gate, _metric(*_spread(median, 0.1)), baseline=_metric(*_spread(100.0, 0.1))
        )
        assert result.passed is None, result.message
        found = re.search(r"(about|more than) (\d+) (samples )?a side", result.message)
        assert found, result.message
        return int(found.group(2)) + (found.group(1) == "more than")

    assert needed(88.0) < needed(90.0) < needed(92.0)


def test_the_gate_is_the_same_for_samples_in_any_order() -> None:
    gate = parse_gate("throughput.decode_tps", "-5%")
    base, cur = (100.0, 90, 110, 95, 105), (80.0, 70, 90, 75, 85)
    one = evaluate_gate(gate, _metric(*cur), baseline=_metric(*base))
    other = evaluate_gate(gate, _metric(*reversed(cur)), baseline=_metric(*sorted(base)))
    assert (one.passed, one.message) == (other.passed, other.message)


def test_missing_metric_is_not_evaluated() -> None:
    result = evaluate_gate(parse_gate("x.y", ">= 1"), None)
    assert result.passed is None and "not evaluated: not measured" in result.message


def test_a_count_on_one_sample_a_side_names_no_noise() -> None:
    mem = lambda v: Metric("memory.mlx_peak_bytes", Unit.BYTES, v)  # noqa: E731
    result = evaluate_gate(
        parse_gate("memory.mlx_peak_bytes", "-5%"),
        mem((1300.0,)),
        higher_is_better=False,
        baseline=mem((1000.0,)),
    )
    assert result.message.endswith("allowed 5.0% worse; baseline n=1, current n=1")
