"""The machine-state guard: CPU shares from scripted readings, which runs and cases it flags and
why, cool-down and wait-for-quiet on a scripted clock, rounds merged, one real reading with
other processes burning CPU, and a real run on a planted busy machine whose gate is not judged
and whose comparison is refused (and judged with --allow-dirty-machine)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.cli import main
from harness.drive.exit_rules import ALLOW_DIRTY_ENV
from harness.results.machine_flags import ARTIFACT, dirty_in, flagged_runs, merged
from harness.runner.energy import EnergyReading, joules_between, read_energy
from harness.runner.machine_state import MachineState
from harness.runner.sample_guard import (
    BUSY_OTHERS_PCT,
    CpuReading,
    SampleGuard,
    Span,
    cpu_reading,
)

CLEAN = MachineState(load_average=(1.0, 1.0, 1.0), cpu_count=2, swap_used_bytes=0)


def reading(at: float, busy: float, ours: float, *, load: float = 2.0, uj: int | None = None):
    energy = EnergyReading(((uj, 2**32),)) if uj is not None else None
    return CpuReading(at, busy, 0.0, ours, load, energy)


@pytest.mark.parametrize(
    ("busy", "ours", "seconds", "cpus", "others"),
    [
        (2.0, 2.0, 1.0, 2, 0.0),  # all of it ours
        (2.0, 1.0, 1.0, 2, 50.0),  # one CPU's worth of other work
        (0.5, 1.0, 1.0, 2, 0.0),  # counters tick apart: never below zero
        (8.0, 0.0, 1.0, 2, 100.0),  # capped at the machine
    ],
)
def test_span_shares(busy: float, ours: float, seconds: float, cpus: int, others: float) -> None:
    span = Span.between(reading(0, 0, 0), reading(seconds, busy, ours), cpus)
    assert span.others_pct == pytest.approx(others)
    assert span.busy() is (others > BUSY_OTHERS_PCT)


def _guard(readings: list[CpuReading], **kwargs: object) -> SampleGuard:
    it: Iterator[CpuReading] = iter(readings)
    states = iter(kwargs.pop("states", [CLEAN, CLEAN]))  # type: ignore[call-overload]
    return SampleGuard(lambda: next(it), state=lambda: next(states), cpus=2, **kwargs)  # type: ignore[arg-type]


def _run(guard: SampleGuard, runs: int, warmup: int = 0, tokens: int | None = None) -> dict:
    guard.begin()
    guard.batch_begin(warmup)
    for i in range(1, warmup + 1):
        guard.progress(i, True)
    for i in range(1, runs + 1):
        guard.progress(i, False)
    return guard.finish(tokens)[ARTIFACT]


def test_a_busy_run_is_flagged_and_named() -> None:
    # batch start, three 1 s runs; other processes took a CPU (50%) during run 2 only
    guard = _guard([reading(0, 0, 0), reading(1, 2, 2), reading(2, 4, 3), reading(3, 6, 5)])
    state = _run(guard, 3)
    assert state["flagged_runs"] == [2]
    assert state["dirty"] == ["machine busy (load 2.0, 50% CPU in other processes in run 2)"]
    assert [r["runs"] for r in state["runs"]] == [[1, 1], [2, 2], [3, 3]]


def test_short_runs_are_judged_together() -> None:
    """Runs of 0.1 s are too short for 10 ms counters alone; the measured span as a whole is."""
    marks = [reading(0.1 * i, 0.2 * i, 0.1 * i) for i in range(6)]  # others: 50% throughout
    state = _run(_guard(marks), 5)
    assert state["flagged_runs"] == []
    assert state["dirty"] == ["machine busy (load 2.0, 50% CPU in other processes)"]
    assert state["others_pct"] == pytest.approx(50.0)


@pytest.mark.parametrize(
    ("seconds", "others_cpu_s", "busy"),
    [
        (0.02, 0.04, False),  # 100% of two CPUs over 20 ms: four 10 ms ticks, not "busy"
        (0.25, 0.5, True),  # 100% over a quarter second: a burner per core
    ],
)
def test_a_tick_or_two_over_a_tiny_span_is_not_busy(
    seconds: float, others_cpu_s: float, busy: bool
) -> None:
    """A whole measured span of a few milliseconds (a tiny model's load): one or two counter
    ticks of a kernel thread read as a large share; busy needs real CPU time from others."""
    marks = [reading(0.0, 0.0, 0.0), reading(seconds, others_cpu_s, 0.0)]
    state = _run(_guard(marks), 1)
    assert (state["dirty"] != []) is busy
    assert state["others_pct"] == pytest.approx(100.0)


def test_a_quiet_machine_is_clean_and_warmups_are_not_measured() -> None:
    # a 5 s warm-up with other work, then two quiet runs
    marks = [reading(0, 0, 0), reading(5, 10, 0), reading(6, 12, 2), reading(7, 14, 4)]
    state = _run(_guard(marks), 2, warmup=1)
    assert state["dirty"] == [] and state["flagged_runs"] == []
    assert state["seconds"] == pytest.approx(2.0)


def test_a_served_model_outside_our_processes_judges_no_busy() -> None:
    marks = [reading(0, 0, 0), reading(1, 2, 0)]
    state = _run(_guard(marks, judge_busy=False), 1)
    assert state["dirty"] == [] and "busy_not_judged" in state


@pytest.mark.parametrize(
    ("before", "after", "reason"),
    [
        (MachineState(on_battery=True), CLEAN, "on battery"),
        (CLEAN, MachineState(cpu_speed_limit_pct=61), "throttled: CPU speed limit 61%"),
        (CLEAN, MachineState(low_power_mode=True), "Low Power Mode on"),
        (
            MachineState(swap_used_bytes=0),
            MachineState(swap_used_bytes=200 << 20),
            "swapping: swap in use grew 200 MiB",
        ),
    ],
)
def test_the_state_around_the_case_makes_it_dirty(
    before: MachineState, after: MachineState, reason: str
) -> None:
    marks = [reading(0, 0, 0), reading(1, 2, 2)]
    state = _run(_guard(marks, states=[before, after]), 1)
    assert state["dirty"] == [reason]


def test_energy_per_token_only_when_runs_are_measured_one_by_one() -> None:
    marks = [reading(0, 0, 0, uj=1_000_000), reading(1, 2, 2, uj=3_000_000)]
    state = _run(_guard(marks), 1, tokens=40)
    assert state["energy"] == {"source": "rapl", "joules": 2.0, "joules_per_token": 0.05}
    # a batch reported as a whole holds its warm-ups: joules, but no J/token
    guard = _guard([reading(0, 0, 0, uj=0), reading(3, 6, 6, uj=3_000_000)])
    guard.begin()
    guard.batch_begin(1)
    guard.progress(2, False)  # the batch's one message: measured runs 1-2
    state = guard.finish(40)[ARTIFACT]
    assert state["runs"][0]["runs"] == [1, 2] and state["runs"][0]["with_warmups"] is True
    assert state["energy"] == {"source": "rapl", "joules": 3.0, "with_warmups": True}


def test_rapl_counters_wrap_and_unreadable_ones_give_nothing(tmp_path: Path) -> None:
    for name, now, wrap in (("intel-rapl:0", "123", "1000"), ("intel-rapl:0:0", "7", "1000")):
        domain = tmp_path / "sys/class/powercap" / name
        domain.mkdir(parents=True)
        (domain / "energy_uj").write_text(now)
        (domain / "max_energy_range_uj").write_text(wrap)
    first = read_energy(tmp_path)
    assert first == EnergyReading(((123, 1000),))  # the sub-domain is inside the package
    assert joules_between(EnergyReading(((900, 1000),)), first) == pytest.approx(223e-6)
    (tmp_path / "sys/class/powercap/intel-rapl:0/energy_uj").chmod(0)
    if os.geteuid() != 0:  # root reads it anyway
        assert read_energy(tmp_path) is None
    assert read_energy(tmp_path / "none") is None


class Clock:
    def __init__(self, busy_until: float) -> None:
        self.now, self.busy_until = 0.0, busy_until

    def read(self) -> CpuReading:
        # other processes take a whole CPU (50%) until busy_until, nothing after
        others = min(self.now, self.busy_until)
        return CpuReading(self.now, others * 1.0, 0.0, 0.0, 1.0)

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.mark.parametrize(
    ("busy_until", "limit", "quiet", "waited_at_least"),
    [(0.0, 10.0, True, 1.0), (3.0, 10.0, True, 2.0), (30.0, 5.0, False, 5.0)],
)
def test_wait_for_quiet(
    busy_until: float, limit: float, quiet: bool, waited_at_least: float
) -> None:
    clock = Clock(busy_until)
    guard = SampleGuard(clock.read, state=lambda: CLEAN, cpus=2, sleep=clock.sleep)
    guard.settle(2.0, limit)
    assert guard.quiet is quiet and guard.cooldown_s == 2.0
    assert waited_at_least <= guard.waited_s <= limit + 0.5
    guard.begin()
    guard.batch_begin(0)
    clock.now += 1
    guard.progress(1, False)
    state = guard.finish()[ARTIFACT]
    assert state["quiet"] is quiet and state["cooldown_s"] == 2.0


def test_rounds_merge_numbering_on() -> None:
    first = {
        "before": {"a": 1},
        "after": {"a": 2},
        "runs": [{"runs": [1, 2]}],
        "flagged_runs": [2],
        "dirty": ["x"],
    }
    later = {
        "before": {"a": 3},
        "after": {"a": 4},
        "runs": [{"runs": [1, 1]}],
        "flagged_runs": [1],
        "dirty": ["x", "y"],
    }
    out = merged(first, later)
    assert out == {
        "before": {"a": 1},
        "after": {"a": 4},
        "runs": [{"runs": [1, 2]}, {"runs": [3, 3]}],
        "flagged_runs": [2, 3],
        "dirty": ["x", "y"],
    }
    assert merged(None, later) is later and merged(first, None) is first


def _burners(count: int) -> list[int]:
    """``count`` processes spinning a CPU each, outside this process's tree (the shell that
    starts them exits, so they are re-parented): other processes, as the guard sees them."""
    spin = f"{sys.executable} -c 'while True: pass' >/dev/null 2>&1 &"
    script = " ".join([spin] * count) + " jobs -p"
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    return [int(pid) for pid in out.stdout.split()]


@pytest.fixture()
def busy_machine() -> Iterator[list[int]]:
    pids = _burners(os.cpu_count() or 2)
    try:
        time.sleep(0.3)
        yield pids
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_real_reading_sees_other_processes(busy_machine: list[int]) -> None:
    sleeper = subprocess.Popen(["sleep", "30"])  # "our" tree: idle
    try:
        start = cpu_reading(sleeper.pid)
        time.sleep(1.5)
        span = Span.between(start, cpu_reading(sleeper.pid), os.cpu_count() or 1)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert span.others_pct is not None and span.others_pct > BUSY_OTHERS_PCT
    assert span.ours_pct is not None and span.ours_pct < 5


def _suite(tmp_path: Path, gate: str = ">= 1", name: str = "s", quiet_s: float = 0.0) -> Path:
    """About 20 tok/s: a floor of 1 holds with 20x headroom; one of 200 is a 10x miss.
    ``quiet_s`` bounds the wait for quiet (before the case, and before measuring a busy miss
    again: 0 lets that one wait 60 s)."""
    model = write_fake_model(tmp_path / "m", per_token_s=0.05, prefill_per_token_s=0.001)
    suite = tmp_path / f"{name}.suite.yaml"
    suite.write_text(
        f"schema_version: 1\ndefaults: {{repeats: 4, wait_for_quiet_s: {quiet_s}}}\nmodels:\n"
        f"  - {{name: m, path: {model}, backend: fake}}\n"
        "scenarios:\n  - scenario: throughput\n    params: {gen_tokens: 12, prompt_tokens: 8}\n"
        f"gates:\n  throughput.decode_tps: '{gate}'\n"
    )
    return suite


def _case(run_dir: Path) -> dict:
    for line in (run_dir / "run.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "case":
            return dict(event["result"])
    raise AssertionError("no case recorded")


def test_a_busy_machine_judges_gates_by_direction_and_leaves_comparisons_unjudged(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    busy_machine: list[int],
) -> None:
    """A CPU per core burns in other processes: a floor that holds with headroom passes (load
    only slows a run) and the run exits 0; a 10x miss is not judged, says why, and the policy
    fails the run; compare refuses; --allow-dirty-machine judges both, the state still kept.
    (No "quiet" run here: on a shared machine no test can promise one.)"""
    monkeypatch.delenv(ALLOW_DIRTY_ENV, raising=False)
    suite, reports = _suite(tmp_path), tmp_path / "reports"
    run = ["run", str(suite), "--report-dir", str(reports), "--run-id"]
    busy = main([*run, "busy"])
    allowed = main([*run, "allowed", "--allow-dirty-machine"])
    out = capsys.readouterr().out
    assert busy == 0 and allowed == 0
    assert "throughput.decode_tps ok on a dirty machine (load only slows a run" in out
    assert "machine: 1 of 1 cases measured on a dirty machine (first: s::m::throughput" in out
    html = (reports / "busy" / "report.html").read_text()
    assert "measured on a dirty machine</strong>" in html and "% CPU in other processes" in html
    assert "⚠ busy machine:</strong> 1 of 1 cases were measured on a dirty machine" in html
    case = _case(reports / "busy")
    state = case["artifacts"][ARTIFACT]
    assert state["dirty"][0].startswith("machine busy (load") and state["others_pct"] > 25
    assert state["before"]["cpu_count"] >= 1 and len(state["runs"]) == 4
    assert case["gates"][0]["passed"] is True

    slow = _suite(tmp_path, ">= 200", "slow", quiet_s=1.0)  # the burners never stop: 1 s
    missed = main(["run", str(slow), "--report-dir", str(reports), "--run-id", "missed"])
    out = capsys.readouterr().out
    assert missed == 1 and "policy: unjudged-gates" in out
    assert "throughput.decode_tps >= 200: not judged: machine busy (load" in out
    assert "a miss or an undecided interval there may be the load's" in out
    assert "not re-measured: still busy after the 1 s wait for quiet" in out
    assert _case(reports / "missed")["gates"][0]["passed"] is None

    judged = _case(reports / "allowed")
    assert judged["gates"][0]["passed"] is True and dirty_in(judged["artifacts"])

    assert main(["compare", str(reports / "allowed"), str(reports / "busy")]) == 1
    out = capsys.readouterr().out
    assert "baseline run measured on a dirty machine: machine busy" in out
    assert "current run measured on a dirty machine: machine busy" in out
    main(["compare", str(reports / "allowed"), str(reports / "busy"), "--allow-dirty-machine"])
    assert "measured on a dirty machine" not in capsys.readouterr().out


def test_flagged_runs_reader_ignores_junk() -> None:
    from harness.core.types import CaseResult, Status

    result = CaseResult(
        case_id="c",
        suite="s",
        model="m",
        scenario="s",
        status=Status.PASSED,
        artifacts={ARTIFACT: {"flagged_runs": [1, "2", True, 0, 3], "dirty": ["x", 5, ""]}},
    )
    assert flagged_runs(result) == (1, 3)
    assert dirty_in(result.artifacts) == ("x",)
