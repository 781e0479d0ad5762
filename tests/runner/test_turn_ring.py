"""Runs that take turns: real child processes hand one turn round, in rotating order; a run that
ends leaves the ring and the others go on; a run whose coordinator went away stops as if
signalled."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from harness.runner.signals import RunInterrupted
from harness.runner.turn_ring import run_ring, start_member, wait_members
from harness.runner.turns import Turns, TurnsInvalid

# A run: holds the turn for each of its slots, writing "name slot" to the trace, then passes it.
CHILD = """
import sys
from harness.runner.turns import Turns
name, slots, trace = sys.argv[1], int(sys.argv[2]), sys.argv[3]
turns = Turns.parse(sys.argv[sys.argv.index("--turns") + 1])
turns.acquire()
for slot in range(slots):
    with open(trace, "a") as fh:
        fh.write(f"{name} {slot}\\n")
    print(f"slot {slot}", flush=True)
    turns.pass_turn()
"""


def _ring(tmp_path: Path, slots: dict[str, int]) -> tuple[list[str], list[int]]:
    trace = tmp_path / "trace"
    lock = threading.Lock()
    members = [
        start_member(
            name, [sys.executable, "-c", CHILD, name, str(n), str(trace)], os.environ, lock
        )
        for name, n in slots.items()
    ]
    run_ring(members)
    statuses = wait_members(members, timeout_s=60)
    return trace.read_text().splitlines(), statuses


def test_the_turn_goes_round_in_rotating_order(tmp_path: Path) -> None:
    lines, statuses = _ring(tmp_path, {"a": 3, "b": 3, "c": 3})
    assert statuses == [0, 0, 0]
    assert lines == [
        "a 0", "b 0", "c 0",
        "b 1", "c 1", "a 1",
        "c 2", "a 2", "b 2",
    ]  # fmt: skip


def test_a_run_that_ends_leaves_the_ring_and_the_others_go_on(tmp_path: Path) -> None:
    lines, statuses = _ring(tmp_path, {"a": 1, "b": 3})
    assert statuses == [0, 0]
    assert [line for line in lines if line.startswith("b")] == ["b 0", "b 1", "b 2"]
    assert lines[:2] == ["a 0", "b 0"]


def test_each_runs_output_is_relayed_behind_its_name(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    _ring(tmp_path, {"old": 1, "new": 1})
    out = capfd.readouterr().out
    assert "[old] slot 0" in out and "[new] slot 0" in out


def test_a_run_whose_coordinator_went_away_stops_as_if_signalled() -> None:
    go_read, go_write = os.pipe()
    done_read, done_write = os.pipe()
    turns = Turns(go_read, done_write)
    os.close(go_write)  # the coordinator is gone: no "go" will ever come
    with pytest.raises(RunInterrupted, match="coordinator stopped") as stopped:
        turns.acquire()
    assert stopped.value.exit_status == 143
    turns.close()
    os.close(done_read)


@pytest.mark.parametrize("raw", ["", "3", "a,b", "1,2,3"])
def test_a_turns_value_that_names_no_two_descriptors_is_refused(raw: str) -> None:
    with pytest.raises(TurnsInvalid, match="READ_FD,WRITE_FD"):
        Turns.parse(raw)
