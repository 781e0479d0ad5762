"""Start the planted server as its own process for a test, and stop it after.

with planted_server(plant=Plant.TOP_K_IGNORED) as url:
    ...  # http://127.0.0.1:PORT
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.servers.planted_requests import Plant

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 30.0


@contextmanager
def planted_server(
    plant: Plant | None = None,
    *,
    token_delay_ms: float = 1.0,
    model_dir: Path | None = None,
    metrics: bool = False,
    spin: bool = False,
) -> Iterator[str]:
    """The base URL of a planted server running in a child process (its own session, so
    stopping it stops nothing else); stopped, and waited for, when the block ends."""
    argv = [sys.executable, "-m", "tests.servers.planted_openai", "--port", "0"]
    argv += ["--token-delay-ms", str(token_delay_ms)]
    if plant is not None:
        argv += ["--plant", plant.value]
    if model_dir is not None:
        argv += ["--model-dir", str(model_dir)]
    if metrics:
        argv.append("--metrics")
    if spin:
        argv.append("--spin")
    process = subprocess.Popen(
        argv,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        yield _ready_url(process)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _ready_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.startswith("READY "):
            return line.split()[1]
        if not line and process.poll() is not None:
            error = process.stderr.read() if process.stderr is not None else ""
            raise RuntimeError(f"the planted server exited {process.returncode}: {error[-2000:]}")
    raise RuntimeError(f"the planted server did not start within {START_TIMEOUT_S} s")
