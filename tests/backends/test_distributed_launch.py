"""The distributed launcher: every rank's result read back, a rank that died or hung named in
one line, and no rank left running after a hang (the launcher's whole group killed). The ranks
here are a stand-in (tests/backends/distributed_fake_rank.py) started by the real mlx.launch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.backends.distributed_launch import LaunchPlan, launch
from harness.backends.distributed_types import RankJob, RankStatus, Split

ROOT = Path(__file__).resolve().parents[2]
FAKE = "tests.backends.distributed_fake_rank"


def _job() -> RankJob:
    return RankJob("/nowhere", Split.TENSOR, ((1, 2),), 2, 0, 1, (4096,), 1, os.getpid())


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


# (mode, time limit, what the line says; "" when every rank answered); every rank answering
# is the real ranks' case (tests/scenarios/test_distributed.py)
CASES = [
    ("die1", 60.0, "rank 1 died: it exited with code 7 before its result; then mlx.launch"),
    ("hang1", 8.0, "hung: no result within 8 s (the group was killed)"),
]


@pytest.mark.parametrize(("mode", "limit_s", "line"), CASES)
def test_each_rank_answers_or_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, limit_s: float, line: str
) -> None:
    monkeypatch.setenv("FAKE_RANK_MODE", mode)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.chdir(ROOT)
    plan = LaunchPlan(2, "ring", None, rank_module=FAKE)
    outcome = launch(plan, _job(), tmp_path, tmp_path / "launch.log", limit_s)
    assert line in outcome.problem and ("\n" not in outcome.problem)
    assert outcome.timed_out == (mode == "hang1")
    answered = [r.rank for r in outcome.results if r is not None]
    if mode == "hang1":  # rank 1 named; rank 0 answered unless the machine was too slow
        assert outcome.problem.startswith(("rank 1 hung", "ranks 0, 1 hung")) and 1 not in answered
    else:
        assert outcome.problem.startswith(line)
        assert answered == ([0, 1] if mode == "ok" else [])
    assert all(r.status is RankStatus.OK for r in outcome.results if r is not None)
    pids = [int(p.read_text()) for p in tmp_path.glob("pid-*")]
    assert len(pids) == 2 and all(_gone(pid) for pid in pids)  # none outlives the launch


def test_a_hostfile_replaces_the_local_hosts(tmp_path: Path) -> None:
    argv = LaunchPlan(2, "jaccl", tmp_path / "hosts.json").argv(tmp_path)
    assert argv[1:4] == ("-m", "harness.backends.distributed_launch", "--")  # the guard
    assert "--hostfile" in argv and "--hosts" not in argv and "--starting-port" not in argv
    assert argv[argv.index("--backend") + 1] == "jaccl"
    local = LaunchPlan(2).argv(tmp_path)
    assert local[local.index("-n") + 1] == "2" and "--starting-port" in local


WORKER = """
import os, sys
from pathlib import Path
from harness.backends.distributed_launch import LaunchPlan, launch
from harness.backends.distributed_types import RankJob, Split
job = RankJob("/nowhere", Split.TENSOR, ((1, 2),), 2, 0, 1, (4096,), 1, os.getpid())
out = Path(sys.argv[1])
launch(LaunchPlan(2, rank_module=sys.argv[2]), job, out, out / "launch.log", 600)
"""


def test_no_rank_outlives_a_killed_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker that launched the world is killed (SIGKILL: no clean-up of its own runs):
    the launcher and every rank go with it."""
    monkeypatch.setenv("FAKE_RANK_MODE", "hang")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    worker = subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path), FAKE], cwd=ROOT)
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("pid-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    pids = [int(p.read_text()) for p in tmp_path.glob("pid-*")]
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    assert len(pids) == 2
    deadline = time.monotonic() + 30
    while not all(_gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert all(_gone(pid) for pid in pids)
