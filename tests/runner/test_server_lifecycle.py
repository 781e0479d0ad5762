"""A server the harness starts (``serve:``) never outlives the run: not after it ends, not
after Ctrl-C or SIGTERM, not when the supervisor is SIGKILLed; its log stays in the run's logs.
Real ``mlx_lm.server`` processes on the tiny zoo model (about 2 s to start)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from harness.core.types import SkipCause, Status
from harness.models.catalog import find_embedded
from harness.results.store import load_run
from tests.runner.run_processes import run_processes, start_marked, wait_for_case, wait_gone

pytestmark = [
    pytest.mark.skipif(
        not Path("/proc/self/environ").exists(), reason="finds the run's processes through /proc"
    ),
    pytest.mark.slow,
]

SUITE = """\
schema_version: 1
defaults: {repeats: 2, warmup: 0, timeout_s: 120}
models:
  - name: served
    embedded: zoo/llama
    serve: mlx_lm
scenarios:
  - scenario: load
  - scenario: http_throughput
    params: {prompt_tokens: 16, gen_tokens: 8}
  - scenario: http_throughput
    id: long
    repeats: 200
    params: {prompt_tokens: 64, gen_tokens: 256}
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    model = find_embedded("zoo/llama")
    if model is None or not model.prepared:
        pytest.skip("zoo/llama is not prepared: run `mlx-harness models prepare`")
    (tmp_path / "s.suite.yaml").write_text(SUITE)
    return tmp_path


def _server_pids(mark: str) -> list[int]:
    pids = []
    for pid in run_processes(mark):
        try:
            if b"mlx_lm.server" in Path(f"/proc/{pid}/cmdline").read_bytes():
                pids.append(pid)
        except OSError:
            continue
    return pids


def _cli(*args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        "s.suite.yaml",
        "--report-dir",
        "reports",
        *args,
    ]


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name
)
def test_stopping_the_run_stops_its_server(project: Path, sig: signal.Signals) -> None:
    mark = uuid.uuid4().hex
    proc = start_marked(_cli("--run-id", "r"), project, mark)
    run_dir = project / "reports" / "r"
    wait_for_case(run_dir / "run.jsonl", "served::http_throughput", timeout_s=120)
    time.sleep(0.5)  # the long case is streaming from the server now
    servers = _server_pids(mark)
    assert len(servers) == 1, run_processes(mark)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    gone_in = wait_gone(mark, timeout_s=15.0)
    print(f"{sig.name}: server and worker gone {gone_in:.2f} s after the driver exited")
    assert "Traceback" not in out
    logs = list((run_dir / "logs").glob("server-mlx_lm-*.log"))
    assert len(logs) == 1 and "$ " in logs[0].read_text()  # the command line, then its output
    run = load_run(run_dir)
    statuses = {r.case_id.split("::", 1)[1]: r.status for r in run.results}
    assert statuses["served::load"] is Status.PASSED
    assert statuses["served::http_throughput"] is Status.PASSED
    if sig is not signal.SIGKILL:
        assert statuses["served::long"] is Status.INTERRUPTED


def test_a_finished_run_leaves_no_server(project: Path) -> None:
    (project / "s.suite.yaml").write_text(
        SUITE.split("  - scenario: http_throughput\n    id: long")[0]
    )
    mark = uuid.uuid4().hex
    proc = start_marked(_cli("--run-id", "f"), project, mark)
    out, _ = proc.communicate(timeout=180)
    assert proc.returncode == 0, out
    assert not run_processes(mark)
    run = load_run(project / "reports" / "f")
    assert [r.status for r in run.results] == [Status.PASSED, Status.PASSED]
    (identity,) = run.models.values()
    assert identity.server is not None and identity.server.startswith("mlx_lm.server ")
    assert identity.server_models  # what /v1/models listed


def test_a_server_that_refuses_the_suites_options_skips_in_one_line(project: Path) -> None:
    text = SUITE.replace("serve: mlx_lm", "serve: {engine: mlx_lm, args: [--no-such-flag]}")
    (project / "s.suite.yaml").write_text(
        text.split("  - scenario: http_throughput\n    id: long")[0]
    )
    done = subprocess.run(
        _cli("--run-id", "d"), cwd=project, capture_output=True, text=True, timeout=120
    )
    run = load_run(project / "reports" / "d")
    reasons = {r.status: r.reason for r in run.results}
    # the installed mlx_lm.server has no such option: the case cannot run here (skipped, the
    # option named), as an older release without an option the suite gives it; never a pass
    assert set(reasons) == {Status.SKIPPED}, done.stdout
    reason = reasons[Status.SKIPPED] or ""
    assert "mlx_lm.server here does not take --no-such-flag" in reason
    # the suite's input: CI does not read it as a pass (input-skip, exit 1), unless an expect:
    # skip entry says the release lacks the option
    assert done.returncode == 1 and "input-skip" in done.stdout + done.stderr, done.stdout
    assert {r.skip_cause for r in run.results} == {SkipCause.INPUT}
    assert "\n" not in reason and "Traceback" not in done.stdout + done.stderr
