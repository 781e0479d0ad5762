"""Starting a server process: ready on health, an early exit or a hang as one line with the
last lines of its log, and stopped for good (a stand-in Python server: this is our plumbing)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.backends.base import ServerArgsRefused
from harness.backends.server_process import (
    ServerCommand,
    ServerProcess,
    ServerStartError,
    free_port,
    start_server,
)

HEALTHY = """
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404); self.end_headers()
    def log_message(self, *a): pass
print("listening", flush=True)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""
DIES = "import sys; print('loading model'); print('error: port already in use'); sys.exit(3)"
HANGS = "import time; print('still loading'); time.sleep(60)"


def command(script: str, port: int) -> ServerCommand:
    argv = (sys.executable, "-c", script, str(port))
    return ServerCommand(argv, f"http://127.0.0.1:{port}/health", {}, "stand-in")


def test_healthy_server_starts_and_stops(tmp_path: Path) -> None:
    port = free_port()
    server = start_server(command(HEALTHY, port), tmp_path / "s.log", timeout_s=30)
    assert server.alive()
    code = server.stop()
    assert not server.alive() and code is not None
    log = (tmp_path / "s.log").read_text()
    assert log.startswith("$ ") and "listening" in log


# (name, script, timeout, fragments of the one line)
FAILURES = [
    (
        "early_exit",
        DIES,
        30.0,
        ["stand-in exited with code 3 before it was ready", "error: port already in use"],
    ),
    ("never_healthy", HANGS, 1.0, ["stand-in not healthy within 1 s", "still loading"]),
]


@pytest.mark.parametrize(
    ("script", "timeout", "fragments"), [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES]
)
def test_failed_start_is_one_line_and_leaves_nothing(
    tmp_path: Path, script: str, timeout: float, fragments: list[str]
) -> None:
    server = ServerProcess(command(script, free_port()), tmp_path / "s.log")
    with pytest.raises(ServerStartError) as info:
        server.wait_healthy(timeout)
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message
    assert not server.alive()


# what argparse prints and how it exits (code 2) on an option the server's release lacks
REFUSES = (
    "import sys; print('usage: server.py [-h] [--model MODEL]'); "
    "print('server.py: error: unrecognized arguments: --prefill-step-size 4'); sys.exit(2)"
)


def test_refused_arguments_are_named_and_told_from_a_crash(tmp_path: Path) -> None:
    """A server whose argument parser refuses the suite's options (a release without them)
    raises ServerArgsRefused naming them, so the case is skipped, not errored; any other
    early exit stays a ServerStartError."""
    server = ServerProcess(command(REFUSES, free_port()), tmp_path / "s.log")
    with pytest.raises(ServerArgsRefused) as info:
        server.wait_healthy(30)
    message = str(info.value)
    assert "stand-in here does not take --prefill-step-size 4" in message
    assert "\n" not in message and not server.alive()
    crash = ServerProcess(command(DIES, free_port()), tmp_path / "d.log")
    with pytest.raises(ServerStartError):
        crash.wait_healthy(30)


def test_missing_binary_is_one_line(tmp_path: Path) -> None:
    missing = ServerCommand(
        ("/nonexistent/llama-server",), "http://127.0.0.1:9/health", {}, "llama-server"
    )
    with pytest.raises(ServerStartError, match="llama-server could not start"):
        ServerProcess(missing, tmp_path / "s.log")
