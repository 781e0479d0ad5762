"""Stopping a real run (a real ``mlx-harness run`` or ``pytest`` process) mid-case.

SIGINT / SIGTERM: the workers stop, unfinished cases are recorded ``interrupted``, a partial
report is written, the exit status is 130 / 143, and ``--resume`` finishes the run without
running the finished cases again. SIGKILL of the supervisor (no chance to clean up): the worker
still dies with it. Every test checks that no process of the run is left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.core.types import Status
from harness.results.store import load_run
from tests.quick_subset import quick_subset
from tests.runner.run_processes import (
    MARK,
    run_processes,
    start_marked,
    wait_for_case,
    wait_gone,
)

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/environ").exists(), reason="finds the run's processes through /proc"
)

SUITE = """\
schema_version: 1
defaults: {repeats: 1, warmup: 0, timeout_s: 60}
models:
  - {name: quick, path: models/quick, backend: fake}
  - {name: slow, path: models/slow, backend: fake}
scenarios:
  - scenario: load
  - scenario: throughput
    params: {gen_tokens: 40, prompt_tokens: 4}
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    write_fake_model(tmp_path / "models" / "quick", per_token_s=0.0)
    write_fake_model(tmp_path / "models" / "slow", per_token_s=0.5)  # 40 tokens: 20 s
    (tmp_path / "s.suite.yaml").write_text(SUITE)
    return tmp_path


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness.cli", *args]


def _pytest(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]


DRIVERS = {
    "cli": lambda *a: _cli("run", "s.suite.yaml", "--report-dir", "reports", *a),
    "pytest": lambda *a: _pytest("s.suite.yaml", "--report-dir", "reports", *a),
}
STOPS = [
    ("cli", signal.SIGINT, 130),
    ("cli", signal.SIGTERM, 143),
    ("pytest", signal.SIGINT, 130),
    ("pytest", signal.SIGTERM, 143),
]


@pytest.mark.parametrize(
    ("driver", "sig", "code"),
    # each driver and each signal once in `make test`; all four nightly
    quick_subset(STOPS, [f"{d}-{s.name}" for d, s, _ in STOPS], {"cli-SIGINT", "pytest-SIGTERM"}),
)
def test_stop_mid_case_then_resume(
    project: Path, driver: str, sig: signal.Signals, code: int
) -> None:
    mark = uuid.uuid4().hex
    command = DRIVERS[driver]
    proc = start_marked(command("--run-id", "r"), project, mark)
    run_dir = project / "reports" / "r"
    wait_for_case(run_dir / "run.jsonl", "slow::load")
    time.sleep(1.0)  # the slow model's throughput case is running in its worker now
    assert len(run_processes(mark)) >= 2  # the driver and a worker
    sent = time.monotonic()
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=30)
    stopped_in = time.monotonic() - sent
    gone_in = wait_gone(mark) + stopped_in
    assert proc.returncode == code, out
    assert "Traceback" not in out
    assert gone_in < 10.0
    # the whole command that goes on, suite and report folder included
    (resume,) = [line for line in out.splitlines() if line.startswith("resume with: ")]
    assert "s.suite.yaml" in resume and "--report-dir reports" in resume, resume
    assert resume.endswith("--resume r") and "--run-id" not in resume, resume

    run = load_run(run_dir)
    statuses = {r.case_id.split("::", 1)[1]: r.status for r in run.results}
    assert statuses == {
        "quick::load": Status.PASSED,
        "quick::throughput": Status.PASSED,
        "slow::load": Status.PASSED,
        "slow::throughput": Status.INTERRUPTED,
    }
    assert run.finished_at is None and run.interrupted == f"interrupted by {sig.name}"
    report = (run_dir / "report.md").read_text()
    assert "1 interrupted" in report

    print(
        f"{driver} {sig.name}: exited in {stopped_in:.2f} s, all processes gone in {gone_in:.2f} s"
    )
    write_fake_model(project / "models" / "slow", per_token_s=0.0)  # the re-run need not wait
    resumed = subprocess.run(
        command("--resume", "r"),
        cwd=project,
        env={**os.environ, MARK: mark},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    events = [json.loads(x) for x in (run_dir / "run.jsonl").read_text().splitlines()]
    ran = [e["result"]["case_id"].split("::", 1)[1] for e in events if e["event"] == "case"]
    assert ran.count("quick::load") == 1 and ran.count("slow::load") == 1  # not run again
    assert ran.count("slow::throughput") == 2  # interrupted, then finished
    final = load_run(run_dir)
    assert [r.status for r in final.results] == [Status.PASSED] * 4
    assert final.finished_at is not None and final.interrupted is None
    assert "4 cases: 4 passed" in resumed.stdout
    assert not run_processes(mark)


def test_supervisor_killed_outright_takes_its_worker_with_it(project: Path) -> None:
    mark = uuid.uuid4().hex
    proc = start_marked(DRIVERS["cli"]("--run-id", "k"), project, mark)
    wait_for_case(project / "reports" / "k" / "run.jsonl", "slow::load")
    time.sleep(0.5)
    assert len(run_processes(mark)) >= 2
    proc.kill()  # SIGKILL: no handler runs, nothing is cleaned up by the supervisor
    proc.communicate(timeout=10)
    gone_in = wait_gone(mark, timeout_s=5.0)
    print(f"supervisor SIGKILLed: its worker gone in {gone_in:.2f} s")
    run = load_run(project / "reports" / "k")
    assert run.finished_at is None  # the record says it is incomplete, with what it measured
    assert {r.status for r in run.results} == {Status.PASSED}


def test_reusing_a_run_id_without_resume_is_one_line(project: Path) -> None:
    first = subprocess.run(
        DRIVERS["cli"]("--run-id", "same", "-k", "quick"),
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert first.returncode == 0, first.stdout + first.stderr
    for driver in DRIVERS:
        again = subprocess.run(
            DRIVERS[driver]("--run-id", "same"),
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
        )
        text = again.stdout + again.stderr
        assert again.returncode != 0 and "Traceback" not in text
        assert "already exists" in text and "--resume same" in text
    assert len(load_run(project / "reports" / "same").results) == 2  # nothing appended
