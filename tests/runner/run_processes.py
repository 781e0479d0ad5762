"""Processes of a real run, found by a mark in their environment (the run, its workers, and the
servers they start all inherit it), for tests that stop runs and check nothing is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

MARK = "MLX_HARNESS_TEST_RUN"


def run_processes(mark: str) -> list[int]:
    """Pids of live processes whose environment carries ``MARK=mark`` (the run and its workers)."""
    found = []
    needle = f"{MARK}={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":  # a zombie is dead, only not yet reaped by its parent
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def start_marked(args: Sequence[str], cwd: Path, mark: str) -> subprocess.Popen[str]:
    env = {**os.environ, MARK: mark, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        list(args),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # a non-interactive shell starts background jobs with SIGINT ignored: restore it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for_case(run_file: Path, case_fragment: str, timeout_s: float = 60.0) -> None:
    """Until the record has a case event whose id contains ``case_fragment``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if run_file.exists():
            for line in run_file.read_text().splitlines():
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if event.get("event") == "case" and case_fragment in event["result"]["case_id"]:
                    return
        time.sleep(0.1)
    raise AssertionError(f"no case {case_fragment} in {run_file} after {timeout_s} s")


def wait_gone(mark: str, timeout_s: float = 10.0) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if not run_processes(mark):
            return time.monotonic() - start
        time.sleep(0.05)
    raise AssertionError(f"processes of the run still alive: {run_processes(mark)}")
