"""``mlx-harness run`` on a one-case suite in a process of its own, for the fidelity scripts:
the case's result, or the script's exit with the one line that says why there is none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.core.types import CaseResult


def run_one_case(suite: Path, reports: Path, run_id: str) -> CaseResult:
    """The passed result of the suite's one case (exits the script otherwise)."""
    from harness.core.types import Status
    from harness.results.store import load_run

    command = [sys.executable, "-m", "harness.cli", "run", str(suite)]
    command += ["--report-dir", str(reports), "--run-id", run_id]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
        sys.exit(f"mlx-harness run failed (exit {done.returncode}): {' '.join(tail)}")
    (result,) = load_run(reports / run_id).results
    if result.status is not Status.PASSED:
        sys.exit(f"our {result.scenario} case did not pass: {result.status.value}: {result.reason}")
    return result
