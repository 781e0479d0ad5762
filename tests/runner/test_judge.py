"""From what a case measured to its status: every gate judged (all failures named, not the
first), a non-passing case's gates left alone, a metric's direction from its spec (and the
default when it has none), then the expectation (xfail, strict or not)."""

from __future__ import annotations

import pytest

from harness.core.metrics import MetricSpec
from harness.core.types import (
    Case,
    Expectation,
    ExpectKind,
    Metric,
    ModelRef,
    ModelSource,
    Status,
    Unit,
)
from harness.runner.judge import judge
from harness.spec.gates import parse_gate

DECODE = "throughput.decode_tps"
TTFT = "throughput.ttft_s"
SPECS = {
    DECODE: MetricSpec(DECODE, Unit.TOKENS_PER_SECOND, True, "decode"),
    TTFT: MetricSpec(TTFT, Unit.SECONDS, False, "time to first token"),
}


def _case(*gates: tuple[str, str], expectation: Expectation | None = None) -> Case:
    ref = ModelRef("m", ModelSource.PATH, "m", "fake")
    return Case(
        "s::m::throughput",
        "s",
        "s.suite.yaml",
        ref,
        "throughput",
        {},
        gates=tuple(parse_gate(m, e) for m, e in gates),
        expectation=expectation,
    )


def _m(name: str, *samples: float) -> Metric:
    unit = Unit.SECONDS if name.endswith("_s") else Unit.TOKENS_PER_SECOND
    return Metric(name, unit, samples)


FIVE = (10.0, 10.01, 10.02, 9.99, 9.98)
MEASURED = (_m(DECODE, *FIVE), _m(TTFT, 0.5, 0.5, 0.5))

# (gates, status in, status out, fragments of the reason)
TABLE = [
    ([(DECODE, ">= 5")], Status.PASSED, Status.PASSED, []),
    ([(DECODE, ">= 10.5")], Status.PASSED, Status.FAILED, ["throughput.decode_tps FAILED"]),
    ([(DECODE, "> 10.02")], Status.PASSED, Status.FAILED, ["FAILED"]),  # the whole range is not >
    ([(DECODE, ">= 9.98")], Status.PASSED, Status.PASSED, []),  # >= on the edge of the range
    ([(TTFT, "<= 0.5")], Status.PASSED, Status.PASSED, []),
    ([(TTFT, "< 0.5")], Status.PASSED, Status.FAILED, ["throughput.ttft_s FAILED"]),
    # every failing gate is named, not only the first
    (
        [(DECODE, ">= 11"), (TTFT, "<= 0.1"), (DECODE, ">= 1")],
        Status.PASSED,
        Status.FAILED,
        ["throughput.decode_tps FAILED", "; throughput.ttft_s FAILED"],
    ),
    # a gate that cannot be judged does not fail the case
    ([("throughput.missing", ">= 1")], Status.PASSED, Status.PASSED, []),
    # a case that did not pass keeps its status and reason: gates judge measurements only
    ([(DECODE, ">= 11")], Status.CRASHED, Status.CRASHED, ["worker died"]),
    ([(DECODE, ">= 11")], Status.ERRORED, Status.ERRORED, ["worker died"]),
]


@pytest.mark.parametrize(("gates", "status", "out", "fragments"), TABLE)
def test_gates_decide_a_passed_case(
    gates: list[tuple[str, str]], status: Status, out: Status, fragments: list[str]
) -> None:
    reason = None if status is Status.PASSED else "worker died"
    got, results, why = judge(_case(*gates), status, MEASURED, reason, SPECS)
    assert got is out, why
    assert len(results) == (len(gates) if status is Status.PASSED else 0)
    for fragment in fragments:
        assert why is not None and fragment in why
    if not fragments:
        assert why is None


@pytest.mark.parametrize(
    ("specs", "passed"),
    [
        (SPECS, False),  # seconds, lower is better: +50% is worse than -5% allows
        ({}, True),  # no spec: higher is better by default, so +50% is better
    ],
)
def test_the_direction_of_a_relative_gate_comes_from_the_spec(
    specs: dict[str, MetricSpec], passed: bool
) -> None:
    baseline = {TTFT: _m(TTFT, 0.4, 0.4, 0.4, 0.4, 0.4)}
    current = (_m(TTFT, 0.6, 0.6, 0.6, 0.6, 0.6),)
    got, (gate,), _ = judge(_case((TTFT, "-5%")), Status.PASSED, current, None, specs, baseline)
    assert gate.passed is passed
    assert got is (Status.PASSED if passed else Status.FAILED)


@pytest.mark.parametrize(
    ("strict", "status", "gates", "out", "fragment"),
    [
        (True, Status.PASSED, [], Status.XPASSED, "XPASS: fixed upstream, remove entry kb:3"),
        (False, Status.PASSED, [], Status.PASSED, None),
        (True, Status.PASSED, [(DECODE, ">= 11")], Status.XFAILED, "(got failed: "),
        (True, Status.TIMED_OUT, [], Status.XFAILED, "known: slow (got timed_out: worker died)"),
    ],
)
def test_an_expected_failure(
    strict: bool,
    status: Status,
    gates: list[tuple[str, str]],
    out: Status,
    fragment: str | None,
) -> None:
    expectation = Expectation(ExpectKind.XFAIL, "slow", strict=strict, source="kb:3")
    reason = None if status is Status.PASSED else "worker died"
    got, _, why = judge(_case(*gates, expectation=expectation), status, MEASURED, reason, SPECS)
    assert got is out
    if fragment is None:
        assert why is None
    else:
        assert why is not None and fragment in why


def test_an_xpass_without_a_source_names_no_entry() -> None:
    from harness.runner.judge import xpass_message

    assert xpass_message(Expectation(ExpectKind.XFAIL, "slow")) == (
        "XPASS: fixed upstream, remove entry (expected to fail: slow)"
    )
