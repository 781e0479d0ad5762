"""A busy machine without flakiness (issue 37, item 5), and relative gates judged against the
same point only (item 7): the judge's rules, each row an exact status and message."""

from __future__ import annotations

import pytest

from harness.core.metrics import MetricSpec
from harness.core.types import Case, Metric, ModelRef, ModelSource, Status, Unit
from harness.runner.judge import LOAD_PROOF, busy_misses, judge, load_proof
from harness.spec.gates import parse_gate

DECODE = "throughput.decode_tps"
TTFT = "throughput.ttft_s"
PEAK = "memory.mlx_peak_bytes"
RPS = "serving.requests_per_s"
SPECS = {
    DECODE: MetricSpec(DECODE, Unit.TOKENS_PER_SECOND, True, "decode"),
    TTFT: MetricSpec(TTFT, Unit.SECONDS, False, "time to first token"),
    PEAK: MetricSpec(PEAK, Unit.BYTES, False, "peak"),
}
BUSY = ("machine busy (load 5.3, 42% CPU in other processes)",)
TWO = ("machine busy (load 5.3, 42% CPU in other processes)", "on battery")
ANYWAY = "(--allow-dirty-machine judges it anyway)"
HELD = "ok on a dirty machine (load only slows a run, so a pass holds): "
MISS = "a miss or an undecided interval there may be the load's"
ONLY = "only a floor on a rate or a ceiling on a time that passes is judged there"
METRICS = (
    Metric(DECODE, Unit.TOKENS_PER_SECOND, (700.0, 702.0, 698.0, 701.0, 699.0)),
    Metric(TTFT, Unit.SECONDS, (0.5, 0.5, 0.5)),
    Metric(PEAK, Unit.BYTES, (1000.0,)),
    Metric(RPS, Unit.REQUESTS_PER_SECOND, (3.0, 3.0)),
)
DECODE_OK = (
    "throughput.decode_tps ok: expected >= 100 tok/s, measured 700 tok/s "
    "(median of 5; 95% interval 698..702)"
)


NOT_MEASURED = "throughput.missing: not evaluated: not measured"


def _nj(head: str, why: str, dirty: tuple[str, ...] = BUSY) -> str:
    """The exact line of a gate not judged on a dirty machine."""
    return f"{head}: not judged: {'; '.join(dirty)}; {why} {ANYWAY}"


def _case(metric: str, expression: str) -> Case:
    ref = ModelRef("m", ModelSource.PATH, "m", "fake")
    gates = (parse_gate(metric, expression),)
    return Case("s::m::throughput", "s", "s.suite.yaml", ref, "throughput", {}, gates=gates)


# (metric, gate, dirty, passed, measured, message); the case's status follows from passed
TABLE = [
    # a floor on a rate that passes on a busy machine passes: load only slows a run
    (DECODE, ">= 100", BUSY, True, 700.0, DECODE_OK.replace("ok: ", HELD) + f"; {BUSY[0]}"),
    # the same on a quiet machine: no note
    (DECODE, ">= 100", (), True, 700.0, DECODE_OK),
    # a ceiling on a time that passes holds too
    (
        TTFT,
        "<= 0.6",
        BUSY,
        True,
        0.5,
        f"throughput.ttft_s {HELD}expected <= 0.6 s, measured 0.5 s (median of 3; 95% interval "
        f"0.5..0.5); {BUSY[0]}",
    ),
    (RPS, "> 1", BUSY, True, 3.0, None),  # requests per second: a rate, as tok/s
    # a miss on a busy machine is not judged (never FAILED): it may be the load's
    (DECODE, ">= 1000", BUSY, None, 700.0, _nj("throughput.decode_tps >= 1000", MISS)),
    (TTFT, "< 0.4", BUSY, None, 0.5, _nj("throughput.ttft_s < 0.4", MISS)),
    # an interval that straddles the floor: undecided there, not judged
    (DECODE, ">= 700", BUSY, None, 700.0, _nj("throughput.decode_tps >= 700", MISS)),
    # every reason is named
    (DECODE, ">= 1000", TWO, None, 700.0, _nj("throughput.decode_tps >= 1000", MISS, TWO)),
    # passes load could have made: a ceiling on a rate, a floor on a time, an equality, bytes
    (DECODE, "<= 1000", BUSY, None, 700.0, _nj("throughput.decode_tps <= 1000", ONLY)),
    (TTFT, ">= 0.1", BUSY, None, 0.5, _nj("throughput.ttft_s >= 0.1", ONLY)),
    (TTFT, "== 0.5", BUSY, None, 0.5, _nj("throughput.ttft_s == 0.5", ONLY)),
    (PEAK, "<= 2000", BUSY, None, 1000.0, _nj("memory.mlx_peak_bytes <= 2000", ONLY)),
    # nothing measured: that is the reason, busy or not
    ("throughput.missing", ">= 1", BUSY, None, None, NOT_MEASURED),
]


@pytest.mark.parametrize(("metric", "expression", "dirty", "passed", "measured", "message"), TABLE)
def test_a_gate_on_a_busy_machine_is_judged_by_direction(
    metric: str,
    expression: str,
    dirty: tuple[str, ...],
    passed: bool | None,
    measured: float | None,
    message: str | None,
) -> None:
    status, (gate,), reason = judge(
        _case(metric, expression), Status.PASSED, METRICS, None, SPECS, dirty=dirty
    )
    assert gate.gate == parse_gate(metric, expression)
    assert (gate.passed, gate.measured) == (passed, measured)
    if message is not None:
        assert gate.message == message
    assert status is Status.PASSED and reason is None  # a busy machine never fails a case


def test_a_miss_on_a_quiet_machine_still_fails() -> None:
    status, (gate,), reason = judge(_case(DECODE, ">= 1000"), Status.PASSED, METRICS, None, SPECS)
    assert status is Status.FAILED and gate.passed is False
    assert reason == gate.message and reason.startswith("throughput.decode_tps FAILED: ")


BASE = {DECODE: Metric(DECODE, Unit.TOKENS_PER_SECOND, (1000.0, 1001.0, 999.0, 1000.5, 999.5))}


def test_a_relative_gate_on_a_busy_machine_is_not_judged_even_when_it_passes() -> None:
    slower = {DECODE: Metric(DECODE, Unit.TOKENS_PER_SECOND, (600.0, 601.0, 599.0))}
    for baseline, passed_quiet in ((BASE, False), (slower, True)):
        quiet = judge(_case(DECODE, "-5%"), Status.PASSED, METRICS, None, SPECS, baseline)
        assert quiet[1][0].passed is passed_quiet
        status, (gate,), _ = judge(
            _case(DECODE, "-5%"), Status.PASSED, METRICS, None, SPECS, baseline, dirty=BUSY
        )
        assert status is Status.PASSED and (gate.passed, gate.measured) == (None, 700.0)
        assert gate.message == (
            f"throughput.decode_tps -5%: not judged: {BUSY[0]}; a relative gate is not judged on "
            f"samples taken there {ANYWAY}"
        )


@pytest.mark.parametrize("unit", list(Unit))
@pytest.mark.parametrize("op", [">=", ">", "<=", "<", "=="])
def test_which_passes_hold_under_load(unit: Unit, op: str) -> None:
    rate = unit in (Unit.TOKENS_PER_SECOND, Unit.REQUESTS_PER_SECOND)
    expected = (rate and op in (">=", ">")) or (unit is Unit.SECONDS and op in ("<=", "<"))
    assert load_proof(parse_gate("x", f"{op} 1"), unit) is expected
    assert load_proof(parse_gate("x", "-5%"), unit) is False  # relative: never by direction
    assert set(LOAD_PROOF) == {Unit.SECONDS, Unit.TOKENS_PER_SECOND, Unit.REQUESTS_PER_SECOND}


PARAMS = ("params changed: prompt_tokens 64 -> 1024",)
MODEL = ("model files changed: weights 513.0 MiB -> 98.2 MiB",)


@pytest.mark.parametrize(
    ("apart", "dirty"), [(PARAMS, ()), (MODEL, ()), ((*PARAMS, *MODEL), ()), (PARAMS, BUSY)]
)
def test_a_relative_gate_is_never_judged_against_another_point(
    apart: tuple[str, ...], dirty: tuple[str, ...]
) -> None:
    """pp1024 against the pp64 baseline, or q4 against f32: not evaluated, never FAILED."""
    status, (gate,), reason = judge(
        _case(DECODE, "-5%"), Status.PASSED, METRICS, None, SPECS, BASE, dirty, apart
    )
    assert status is Status.PASSED and reason is None
    assert gate.gate == parse_gate(DECODE, "-5%")
    assert (gate.passed, gate.measured) == (None, 700.0)
    assert gate.message == (
        f"throughput.decode_tps -5%: not evaluated: the baseline's case is not comparable "
        f"({'; '.join(apart)}); a relative gate is judged against the same point only"
    )


def test_what_apart_leaves_alone() -> None:
    # an absolute gate does not look at the baseline: judged as ever
    status, (gate,), _ = judge(
        _case(DECODE, ">= 1000"), Status.PASSED, METRICS, None, SPECS, BASE, apart=PARAMS
    )
    assert status is Status.FAILED and gate.passed is False
    # no baseline case at all: said so, as ever
    _, (gate,), _ = judge(_case(DECODE, "-5%"), Status.PASSED, METRICS, None, SPECS, apart=PARAMS)
    assert gate.passed is None and "not evaluated: no baseline" in gate.message
    # the same point: judged (here a -30% drop, so FAILED)
    status, (gate,), _ = judge(_case(DECODE, "-5%"), Status.PASSED, METRICS, None, SPECS, BASE)
    assert status is Status.FAILED and gate.message.startswith(
        "throughput.decode_tps FAILED: -30.0%"
    )


@pytest.mark.parametrize("status", [Status.CRASHED, Status.SKIPPED, Status.ERRORED])
def test_a_case_that_did_not_pass_has_no_gates_busy_or_not(status: Status) -> None:
    got, gates, reason = judge(_case(DECODE, ">= 100"), status, METRICS, "why", SPECS, dirty=BUSY)
    assert (got, gates, reason) == (status, (), "why")


# (metric, gate, dirty, baseline, apart, a miss a re-measure once quiet may judge)
MISSES = [
    (DECODE, ">= 1000", BUSY, None, (), True),  # a miss on a busy machine
    (DECODE, ">= 700", BUSY, None, (), True),  # undecided there
    (TTFT, "< 0.4", BUSY, None, (), True),
    (DECODE, ">= 100", BUSY, None, (), False),  # a pass that holds: judged already
    (DECODE, "<= 1000", BUSY, None, (), False),  # passes, though load may have helped: no miss
    (DECODE, "<= 100", BUSY, None, (), True),  # a miss of a bound load does not work against
    (DECODE, ">= 1000", (), None, (), False),  # a quiet machine: FAILED as it is
    (DECODE, ">= 1000", ("on battery",), None, (), False),  # a wait cannot end a battery
    (DECODE, ">= 1000", TWO, None, (), False),  # busy and on battery: nor this
    (DECODE, "-5%", BUSY, BASE, (), True),  # a relative miss against a comparable baseline
    (DECODE, "-5%", BUSY, None, (), False),  # no baseline: a re-measure cannot judge it
    (DECODE, "-5%", BUSY, BASE, PARAMS, False),  # another point: never judged
    ("throughput.missing", ">= 1", BUSY, None, (), False),  # nothing measured
]


@pytest.mark.parametrize(("metric", "expression", "dirty", "baseline", "apart", "miss"), MISSES)
def test_which_misses_a_wait_for_quiet_may_settle(
    metric: str,
    expression: str,
    dirty: tuple[str, ...],
    baseline: dict[str, Metric] | None,
    apart: tuple[str, ...],
    miss: bool,
) -> None:
    case = _case(metric, expression)
    found = busy_misses(case, Status.PASSED, METRICS, SPECS, baseline, dirty, apart)
    assert found == (case.gates if miss else ())
    # what judge says of it there: a miss the re-measure is for is never judged on those samples
    _, (gate,), _ = judge(case, Status.PASSED, METRICS, None, SPECS, baseline, dirty, apart)
    if miss:
        assert gate.passed is None


def test_a_case_that_did_not_pass_is_not_measured_again() -> None:
    case = _case(DECODE, ">= 1000")
    assert busy_misses(case, Status.CRASHED, METRICS, SPECS, None, BUSY) == ()


def test_a_note_ends_the_gates_message_and_the_cases_reason() -> None:
    case = _case(DECODE, ">= 1000")
    note = {case.gates[0]: "re-measured once quiet (waited 4.2 s)"}
    status, (gate,), reason = judge(case, Status.PASSED, METRICS, None, SPECS, notes=note)
    assert status is Status.FAILED and gate.passed is False
    assert gate.message.endswith("; re-measured once quiet (waited 4.2 s)")
    assert reason == gate.message
