"""A server process the harness starts: a free loopback port, its log in the run's logs, ready
when its health URL answers, an early exit turned into one line (the last lines of its log), and
stopped with its whole process group at the end, so no server outlives the run.

The server is started by the worker, in the worker's process group: when the supervisor kills
the worker's group (timeout, Ctrl-C, SIGTERM) the server goes with it, and on Linux the kernel
also kills it when the worker dies (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from harness.backends.base import BackendError, ServerArgsRefused

HEALTH_POLL_S = 0.2
STOP_GRACE_S = 5.0
LOG_TAIL_LINES = 3


class ServerStartError(BackendError):
    """The server exited or never became healthy; the message is one line."""


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on ``host`` now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    kept = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " | ".join(kept[-lines:])


def refused_args(path: Path) -> str | None:
    """The arguments an argparse-based server refused at start (its ``error: unrecognized
    arguments: ...`` line, as Python's argparse writes it), or None."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    found = re.findall(r"error: unrecognized arguments: (.+)", text)
    return found[-1].strip()[:200] if found else None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG


@dataclass(frozen=True)
class ServerCommand:
    """What to run: ``argv``, the URL that answers 200 once it is ready, extra environment."""

    argv: tuple[str, ...]
    health_url: str
    env: Mapping[str, str]
    label: str  # e.g. "mlx_lm.server"


class ServerProcess:
    """One started server. Use as a context manager, or call :meth:`stop`."""

    def __init__(self, command: ServerCommand, log_path: Path) -> None:
        self.command = command
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log: IO[bytes] = log_path.open("ab")
        self._log.write(f"$ {' '.join(command.argv)}\n".encode())
        self._log.flush()
        try:
            self.proc = subprocess.Popen(
                list(command.argv),
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **command.env},
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )
        except OSError as exc:
            self._log.close()
            raise ServerStartError(
                f"{command.label} could not start: {exc.strerror or exc} ({command.argv[0]})"
            ) from None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_healthy(self, timeout_s: float) -> float:
        """Seconds until the health URL answered 200; :class:`ServerStartError` (one line, with
        the last lines of the log) when the process exits first or the time runs out."""
        import httpx

        start = time.perf_counter()
        deadline = start + timeout_s
        with httpx.Client(timeout=2.0) as client:
            while True:
                code = self.proc.poll()
                if code is not None:
                    self.stop()
                    refused = refused_args(self.log_path)
                    if refused is not None:
                        raise ServerArgsRefused(
                            f"{self.command.label} here does not take {refused} (its argument "
                            "parser: unrecognized arguments; a release without that option): "
                            "the case cannot run in this environment"
                        )
                    raise ServerStartError(self._early_exit(code))
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(self.command.health_url).status_code == 200:
                        return time.perf_counter() - start
                if time.perf_counter() > deadline:
                    self.stop()
                    tail = log_tail(self.log_path)
                    raise ServerStartError(
                        f"{self.command.label} not healthy within {timeout_s:g} s "
                        f"({self.command.health_url})" + (f"; log: {tail}" if tail else "")
                    )
                time.sleep(HEALTH_POLL_S)

    def _early_exit(self, code: int) -> str:
        how = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
        tail = log_tail(self.log_path)
        return f"{self.command.label} {how} before it was ready" + (
            f"; log: {tail}" if tail else f" (log: {self.log_path})"
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, grace_s: float = STOP_GRACE_S) -> int | None:
        """SIGTERM, then SIGKILL after ``grace_s``; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self._log.closed:
            self._log.close()
        return self.proc.returncode

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server(command: ServerCommand, log_path: Path, timeout_s: float) -> ServerProcess:
    """Start ``command`` and wait until it is healthy (or raise, with the process stopped)."""
    server = ServerProcess(command, log_path)
    server.wait_healthy(timeout_s)
    return server


def loopback_url(port: int, path: str = "") -> str:
    return f"http://127.0.0.1:{port}{path}"


def python_module_argv(module: str, args: Sequence[str]) -> tuple[str, ...]:
    return (sys.executable, "-m", module, *args)
