"""Timing cases in rounds when pin sets take turns: the plan is a function of the case alone,
rounds merge into one case, and every case passes exactly its planned turns, whatever happens
to it (a real worker over the fake backend)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.core.types import (
    AutoRepeats,
    Case,
    Expectation,
    ExpectKind,
    Metric,
    Status,
    Unit,
)
from harness.runner.active_run import ActiveRun
from harness.runner.outcome import Outcome
from harness.runner.rounds import (
    RoundPlan,
    merge_round,
    per_run_names,
    plan_for,
    round_plan,
    with_stop,
)
from harness.runner.turns import DONE, GO, Turns
from tests.runner.test_active_run import _case

AUTO = AutoRepeats(min_repeats=3, max_repeats=6)

# (repeats, auto, measures time, the measured runs of each round)
PLANS = [
    (5, None, True, (2, 1, 1, 1)),
    (3, None, True, (2, 1)),
    (2, None, True, (2,)),
    (1, None, True, (1,)),
    (5, None, False, (5,)),  # no timing: one request, as alone
    (3, AUTO, True, (3, 1, 1, 1)),  # auto: rounds up to its maximum
    (3, AUTO, False, (3,)),  # auto without timing: the worker decides, in one request
]


@pytest.mark.parametrize(("repeats", "auto", "timed", "sizes"), PLANS)
def test_a_case_is_planned_in_rounds_from_itself_alone(
    tmp_path: Path, repeats: int, auto: AutoRepeats | None, timed: bool, sizes: tuple[int, ...]
) -> None:
    case = _with(_case(tmp_path / "m"), repeats=repeats, auto_repeats=auto)
    plan = round_plan(case, timed)
    assert plan.sizes == sizes and plan.turns == len(sizes)


def test_scenarios_that_measure_no_time_or_repeat_nothing_take_one_round(tmp_path: Path) -> None:
    base = _with(_case(tmp_path / "m"), repeats=5)
    assert plan_for(base).turns == 4  # throughput
    assert plan_for(_with(base, scenario="load")).turns == 1  # reloads, not repeats
    assert plan_for(_with(base, scenario="tool_calls")).turns == 1  # counts, not seconds
    assert plan_for(_with(base, scenario="no-such-scenario")).turns == 1


def _metric(name: str, *samples: float, unit: Unit = Unit.TOKENS_PER_SECOND) -> Metric:
    return Metric(name, unit, tuple(samples))


def test_rounds_append_per_run_values_and_keep_per_case_ones() -> None:
    first = Outcome(
        Status.PASSED,
        metrics=(_metric("decode_tps", 10.0, 11.0), _metric("ceiling", 99.0)),
        artifacts={"texts": ["a", "b"], "timing": {"load_s": 1.0, "scenario_s": 2.0}},
    )
    second = Outcome(
        Status.PASSED,
        metrics=(_metric("decode_tps", 12.0), _metric("ceiling", 98.0)),
        artifacts={"texts": ["c"], "timing": {"load_s": 0.0, "scenario_s": 1.5}},
    )
    merged = merge_round(first, second, per_run_names(first, 2))
    assert [m.samples for m in merged.metrics] == [(10.0, 11.0, 12.0), (99.0,)]
    assert merged.artifacts["texts"] == ["a", "b", "c"]
    assert merged.artifacts["timing"] == {"load_s": 1.0, "scenario_s": 3.5}


def test_a_round_that_fails_ends_the_case_with_its_status_and_keeps_what_was_measured() -> None:
    first = Outcome(Status.PASSED, metrics=(_metric("decode_tps", 10.0, 11.0),))
    crashed = Outcome(Status.CRASHED, "worker killed by SIGKILL")
    merged = merge_round(first, crashed, per_run_names(first, 2))
    assert (merged.status, merged.reason) == (Status.CRASHED, "worker killed by SIGKILL")
    assert merged.metrics[0].samples == (10.0, 11.0)


def test_the_repeats_artifact_counts_the_whole_case(tmp_path: Path) -> None:
    case = _with(_case(tmp_path / "m"), repeats=4)
    outcome = Outcome(Status.PASSED, metrics=(_metric("decode_tps", 10.0, 11.0, 12.0, 11.0),))
    plan = RoundPlan((2, 1, 1), ("decode_tps",))
    stop = with_stop(case, outcome, plan, taken=4, rounds=3, reason=None).artifacts["repeats"]
    assert (stop["mode"], stop["taken"], stop["rounds"], stop["rounds_planned"]) == (
        "fixed", 4, 3, 3,
    )  # fmt: skip
    assert set(stop["rel_ci"]) == {"decode_tps"} and "decode_tps" in stop["cv"]


def _with(case: Case, **changes: object) -> Case:
    import dataclasses

    return dataclasses.replace(case, **changes)  # type: ignore[arg-type]


class Coordinator:
    """The other side of the turn pipes: gives the turn back after ``hold_s`` seconds (as if
    another pin set's round ran meanwhile)."""

    def __init__(self, hold_s: float = 0.0) -> None:
        self.hold_s = hold_s
        self.go_read, self.go_write = os.pipe()
        self.done_read, self.done_write = os.pipe()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            time.sleep(self.hold_s)
            try:
                os.write(self.go_write, GO)
            except OSError:
                return
            if os.read(self.done_read, len(DONE)) != DONE:
                return

    def turns(self) -> Turns:
        return Turns(self.go_read, self.done_write)

    def stop(self) -> None:
        os.close(self.done_write)
        self.thread.join(timeout=10)
        for fd in (self.go_read, self.go_write, self.done_read):
            os.close(fd)


@pytest.fixture()
def coordinator() -> Iterator[Coordinator]:
    c = Coordinator()
    yield c
    c.stop()


@pytest.mark.slow
def test_every_case_passes_exactly_its_planned_turns(
    tmp_path: Path, coordinator: Coordinator
) -> None:
    write_fake_model(tmp_path / "ok")
    write_fake_model(tmp_path / "bad", on_generate="error")
    skip = Expectation(ExpectKind.SKIP, "not today")
    cases = [
        _with(_case(tmp_path / "ok"), repeats=5),  # 4 rounds
        _with(_case(tmp_path / "ok", "load"), repeats=5),  # 1 round: reloads
        _with(_case(tmp_path / "bad"), repeats=5),  # fails in round 1, passes 4
        _with(_case(tmp_path / "ok", key="skipped", expectation=skip), repeats=5),  # 4, no work
    ]
    turns = coordinator.turns()
    session = ActiveRun(tmp_path / "reports", [], run_id="r", turns=turns)
    try:
        counts = []
        results = []
        for case in cases:
            before = turns.passed
            results.append(session.run_case(case))
            counts.append(turns.passed - before)
    finally:
        session.close_worker()
    assert [r.status for r in results] == [
        Status.PASSED, Status.PASSED, Status.ERRORED, Status.SKIPPED,
    ]  # fmt: skip
    assert counts == [4, 1, 4, 4]
    throughput = results[0]
    assert len(throughput.metric("throughput.decode_tps").samples) == 5  # type: ignore[union-attr]
    assert throughput.artifacts["repeats"]["rounds"] == 4
    assert turns.waited_s > 0.0


def test_a_cases_duration_leaves_out_the_other_pin_sets_turns(tmp_path: Path) -> None:
    """The coordinator holds the turn 0.3 s at each pass: the case's duration stays its own."""
    write_fake_model(tmp_path / "ok")
    slow = Coordinator(hold_s=0.3)
    turns = slow.turns()
    session = ActiveRun(tmp_path / "reports", [], run_id="r", turns=turns)
    try:
        start = time.perf_counter()
        result = session.run_case(_with(_case(tmp_path / "ok"), repeats=5))  # 4 rounds
        wall = time.perf_counter() - start
    finally:
        session.close_worker()
        slow.stop()
    assert result.status is Status.PASSED
    # the turn is away 0.3 s between its 4 rounds (3 times), and at most 0.3 s before and
    # after the case: counted in the case, the difference would be 0.6 s at most
    assert wall - result.duration_s >= 3 * 0.3


# (auto settings, measured runs expected, reason fragment)
AUTO_STOPS = [
    (AutoRepeats(min_repeats=6, max_repeats=8, rel_ci=10.0), 6, "ci "),  # narrow enough at once
    (AutoRepeats(min_repeats=3, max_repeats=5, rel_ci=1e-9), 5, "max repeats 5 reached"),
]


@pytest.mark.parametrize(("auto", "taken", "reason"), AUTO_STOPS, ids=["ci", "max"])
def test_auto_repeats_stop_between_rounds_and_pass_the_turns_left(
    tmp_path: Path, coordinator: Coordinator, auto: AutoRepeats, taken: int, reason: str
) -> None:
    write_fake_model(tmp_path / "ok")
    case = _with(_case(tmp_path / "ok"), repeats=auto.min_repeats, auto_repeats=auto)
    turns = coordinator.turns()
    session = ActiveRun(tmp_path / "reports", [], run_id="r", turns=turns)
    try:
        result = session.run_case(case)
    finally:
        session.close_worker()
    stop = result.artifacts["repeats"]
    assert result.status is Status.PASSED, result.reason
    assert (stop["mode"], stop["taken"]) == ("auto", taken) and reason in stop["reason"]
    assert len(result.metric("throughput.decode_tps").samples) == taken  # type: ignore[union-attr]
    assert turns.passed == plan_for(case).turns == 1 + auto.max_repeats - auto.min_repeats
