"""A miss measured on a busy machine is measured once more once the machine is quiet (issue 37):
a real session on the fake backend, the machine's state and the wait for quiet scripted (no test
depends on the test machine's real load), each row an exact outcome."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from harness.backends.fake import write_fake_model
from harness.core.types import Case, Status
from harness.report.machine_state import build, machine_lines
from harness.report.overhead import overhead
from harness.results.machine_flags import ARTIFACT, REMEASURE, dirty_reasons, remeasured
from harness.results.store import load_run
from harness.runner.active_run import ActiveRun
from harness.runner.remeasure import WAIT_S, QuietWait, wait_bound
from tests.runner.cases import gated_throughput_case

DECODE = "throughput.decode_tps"
BUSY = "machine busy (load 5.3, 42% CPU in other processes)"
QUIET = QuietWait(True, 4.2)
STILL_BUSY = QuietWait(False, 60.0)
NOT_JUDGED = "not judged: machine busy"


@dataclasses.dataclass
class ScriptedMachine:
    """The machine's state while each measurement was taken (its dirty reasons, in turn) and
    how the wait for quiet ends; what the session asked of it is kept."""

    states: list[tuple[str, ...]]
    wait: QuietWait = QUIET
    waits: list[float] = dataclasses.field(default_factory=list)
    measured_n: int = 0

    def wait_for_quiet(self, bound_s: float) -> QuietWait:
        self.waits.append(bound_s)
        return self.wait

    def measured(self, artifacts: dict[str, Any]) -> dict[str, Any]:
        dirty = self.states[self.measured_n]
        self.measured_n += 1
        return {**artifacts, ARTIFACT: {**artifacts.get(ARTIFACT, {}), "dirty": list(dirty)}}


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fake_model(tmp_path_factory.mktemp("m") / "good", per_token_s=0.001)


def _case(path: Path, gate: str, wait_for_quiet_s: float = 0.0) -> Case:
    return gated_throughput_case(path, gate, wait_for_quiet_s=wait_for_quiet_s)


def _run(
    tmp_path: Path, case: Case, machine: ScriptedMachine, *, allow_dirty: bool = False
) -> ActiveRun:
    session = ActiveRun(
        tmp_path / "reports", [], run_id="r", allow_dirty_machine=allow_dirty, watch=machine
    )
    try:
        session.run_case(case)
    finally:
        session.close_worker()
    return session


MISS = ">= 1e9"  # the fake model decodes about a thousand tokens a second
PASS = ">= 1"

# (gate, the states of each measurement, how the wait ends, the gate's passed, its message's
#  end, the status, measurements taken, waits)
TABLE = [
    # a miss on a busy machine, quiet after the wait: measured again, judged on the new samples
    (
        MISS,
        [(BUSY,), ()],
        QUIET,
        False,
        "; re-measured once quiet (waited 4.2 s; first measured {first} tok/s on a busy machine)",
        Status.FAILED,
        2,
        1,
    ),
    # the wait runs out: not measured again, not judged, and says so
    (
        MISS,
        [(BUSY,)],
        STILL_BUSY,
        None,
        "(--allow-dirty-machine judges it anyway); not re-measured: still busy after the 60 s "
        "wait for quiet",
        Status.PASSED,
        1,
        1,
    ),
    # busy again on the second measurement: not judged, said so; never a third
    (
        MISS,
        [(BUSY,), (BUSY,)],
        QUIET,
        None,
        f"tok/s on a busy machine), busy again: {BUSY}",
        Status.PASSED,
        2,
        1,
    ),
    # a floor on a rate that passes on a busy machine holds: no re-measure
    (PASS, [(BUSY,)], QUIET, True, f"; {BUSY}", Status.PASSED, 1, 0),
    # a miss on a quiet machine fails as it is
    (MISS, [()], QUIET, False, "(median of 2; 95% interval {interval})", Status.FAILED, 1, 0),
    # on battery: no wait for quiet ends that, so no re-measure
    (MISS, [("on battery",)], QUIET, None, "judges it anyway)", Status.PASSED, 1, 0),
]


@pytest.mark.parametrize(
    ("gate", "states", "wait", "passed", "ending", "status", "measured", "waits"), TABLE
)
def test_a_miss_on_a_busy_machine_is_measured_once_more_once_quiet(
    tmp_path: Path,
    model: Path,
    gate: str,
    states: list[tuple[str, ...]],
    wait: QuietWait,
    passed: bool | None,
    ending: str,
    status: Status,
    measured: int,
    waits: int,
) -> None:
    machine = ScriptedMachine(states, wait)
    _run(tmp_path, _case(model, gate), machine)
    (result,) = load_run(tmp_path / "reports" / "r").results
    (got,) = result.gates
    assert (machine.measured_n, len(machine.waits)) == (measured, waits)
    assert (got.passed, result.status) == (passed, status), got.message
    again = remeasured(result)
    first = again.first_metrics.get(DECODE, ()) if again is not None else ()
    decode = next(m for m in result.metrics if m.name == DECODE)
    fill = {
        "first": f"{_median(first):.4g}" if first else "",
        "interval": _interval(decode.samples),
    }
    assert got.message.endswith(ending.format(**fill)), got.message
    if status is Status.FAILED:
        assert result.reason == got.message
    assert tuple(result.artifacts[ARTIFACT]["dirty"]) == states[-1]
    if waits:
        assert again is not None and machine.waits == [WAIT_S]
        assert (again.waited_s, again.quiet) == (wait.waited_s, wait.quiet)
    if waits and wait.quiet:  # both measurements kept, apart
        assert again is not None and again.first_dirty == (BUSY,)
        assert again.first_gates and NOT_JUDGED in again.first_gates[0]
        assert len(first) == len(decode.samples) == 2
    elif waits:  # the wait ran out: the result's samples are the first's, not kept twice
        assert again is not None and (again.first_state, again.first_metrics) == ({}, {})
    else:
        assert REMEASURE not in result.artifacts


def _median(samples: tuple[float, ...]) -> float:
    ordered = sorted(samples)
    return (ordered[0] + ordered[1]) / 2


def _interval(samples: tuple[float, ...]) -> str:
    return f"{min(samples):.4g}..{max(samples):.4g}"


def test_allow_dirty_machine_judges_the_first_samples_and_measures_nothing_again(
    tmp_path: Path, model: Path
) -> None:
    machine = ScriptedMachine([(BUSY,)])
    _run(tmp_path, _case(model, MISS), machine, allow_dirty=True)
    (result,) = load_run(tmp_path / "reports" / "r").results
    assert result.status is Status.FAILED and result.gates[0].passed is False
    assert (machine.measured_n, machine.waits) == (1, [])


def test_the_wait_is_bounded_by_the_suites_wait_for_quiet(tmp_path: Path, model: Path) -> None:
    machine = ScriptedMachine([(BUSY,)], QuietWait(False, 5.0))
    case = _case(model, MISS, wait_for_quiet_s=5.0)
    assert (wait_bound(case), wait_bound(dataclasses.replace(case, wait_for_quiet_s=0))) == (
        5.0,
        WAIT_S,
    )
    _run(tmp_path, case, machine)
    (result,) = load_run(tmp_path / "reports" / "r").results
    assert machine.waits == [5.0]
    assert result.gates[0].message.endswith(
        "not re-measured: still busy after the 5 s wait for quiet"
    )


def test_the_terminal_and_the_report_say_re_measured_once_quiet(
    tmp_path: Path, model: Path
) -> None:
    _run(tmp_path, _case(model, MISS), ScriptedMachine([(BUSY,), ()]))
    run = load_run(tmp_path / "reports" / "r")
    (result,) = run.results
    assert not dirty_reasons(result)  # the samples kept are the quiet ones
    assert machine_lines(run) == [
        "machine: 1 case missed a gate on a busy machine: 1 re-measured once quiet (first: "
        "t::good::throughput: re-measured once quiet (waited 4.2 s))"
    ]
    states = build(run)
    assert states is not None
    (row,) = states.table.rows
    assert row[-1].text == f"re-measured once quiet (waited 4.2 s); the first measurement: {BUSY}"
    # the wait is the suite's kind of time: apart from the harness's overhead, never in it
    spent = overhead(run)
    assert spent is not None and spent.waits_s == pytest.approx(QUIET.waited_s)


def test_a_wait_that_ran_out_is_on_the_terminal_too(tmp_path: Path, model: Path) -> None:
    _run(tmp_path, _case(model, MISS), ScriptedMachine([(BUSY,)], STILL_BUSY))
    run = load_run(tmp_path / "reports" / "r")
    lines = machine_lines(run)
    assert lines[0] == (
        "machine: 1 case missed a gate on a busy machine: 1 still busy after the wait, not judged "
        "(first: t::good::throughput: not re-measured: still busy after the 60 s wait for quiet)"
    )
    assert lines[1].startswith("machine: 1 of 1 cases measured on a dirty machine")
    spent = overhead(run)  # the wait counted once, the one measurement's own waits once
    assert spent is not None and spent.waits_s == pytest.approx(STILL_BUSY.waited_s)
