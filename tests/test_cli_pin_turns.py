"""Stopping pin sets that take turns: a signal to ``mlx-harness run --pin-set all`` reaches every
pin set's run (each in its own session), each records its unfinished cases as interrupted and
writes its partial report, the exit status is 128 + the signal, and no process is left."""

from __future__ import annotations

import signal
import sys
import time
import uuid
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.core.types import Status
from harness.results.store import load_run
from tests.runner.fake_dep_index import TRACE_ENV, write_index
from tests.runner.run_processes import run_processes, start_marked, wait_gone

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/environ").exists(), reason="finds the run's processes through /proc"
)

SUITE = """\
schema_version: 1
defaults: {repeats: 3, warmup: 0, timeout_s: 120}
models:
  - {name: m, path: model, backend: fake_dep}
scenarios:
  - scenario: throughput
    params: {prompt_tokens: 4, gen_tokens: 40, ignore_eos: true}
pin_sets:
  - {name: old, pins: ["harness-fake-dep==1.2"]}
  - {name: new, pins: ["harness-fake-dep==1.3"]}
"""


def _wait_for(path: Path, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not (path.exists() and path.read_text()):
        assert time.monotonic() < deadline, f"nothing in {path} after {timeout_s} s"
        time.sleep(0.1)


STOPS = [(signal.SIGTERM, 143), (signal.SIGINT, 130)]


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), STOPS, ids=[s.name for s, _ in STOPS])
def test_a_stop_reaches_every_pin_sets_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals, code: int
) -> None:
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(TRACE_ENV, str(tmp_path / "trace"))
    write_fake_model(tmp_path / "model")
    write_index(tmp_path / "wheels", per_token_s=0.5)  # 40 tokens: 20 s a run
    (tmp_path / "p.suite.yaml").write_text(SUITE)
    mark = uuid.uuid4().hex
    command = [sys.executable, "-m", "harness.cli", "run", "p.suite.yaml", "--pin-set", "all"]
    command += ["--pin-env", "overlay", "--find-links", str(tmp_path / "wheels")]
    command += ["--run-id", "r", "--report-dir", "reports", "--progress", "lines"]
    proc = start_marked(command, tmp_path, mark)
    _wait_for(tmp_path / "trace")  # old's first round is generating; new waits for its turn
    time.sleep(0.5)
    assert len(run_processes(mark)) >= 4  # the coordinator, two runs, old's worker
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == code, out
    assert "Traceback" not in out
    assert wait_gone(mark) < 10.0
    for name in ("old", "new"):
        run = load_run(tmp_path / "reports" / f"r-{name}")
        assert [r.status for r in run.results] == [Status.INTERRUPTED], name
        assert run.interrupted == f"interrupted by {sig.name}"
        assert (tmp_path / "reports" / f"r-{name}" / "report.md").is_file()
    assert f"[old] interrupted by {sig.name}" in out
