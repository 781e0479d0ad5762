"""The supervisor side of one worker process: requests with timeouts, crashes as outcomes.

Requests and replies are the typed messages of :mod:`harness.runner.messages`. While it waits
for a reply, a ``{"op": "progress", ...}`` line
(:class:`harness.runner.repeat_progress.RepeatProgress`) goes to the request's ``on_progress``
and the wait goes on: such a line is never the reply, and a malformed one is dropped (a debug
log line), never a failure of the case. Any other line that is not a reply (not JSON, or not a
message of a known kind and shape) stops the worker and raises :class:`WorkerProtocolError`
with its one line.
"""

from __future__ import annotations

import json
import logging
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

from harness.runner.messages import (
    CrashReply,
    ErrorReply,
    ExitRequest,
    LoadedReply,
    MessageError,
    Request,
    ResultReply,
    reply_from_wire,
)
from harness.runner.repeat_progress import OP as PROGRESS_OP
from harness.runner.repeat_progress import RepeatProgress

OnProgress = Callable[[RepeatProgress], None]
Answer = LoadedReply | ResultReply | ErrorReply | CrashReply  # a request's own reply


class WorkerProtocolError(Exception):
    """The worker answered with something that is not a reply (a bug on our side, not a crash)."""


class WorkerGone(Exception):
    """The worker died (crash, signal, exit) or went silent past its timeout."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "worker still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"worker killed by {name}"
    return f"worker exited with code {returncode}"


def log_tail(path: Path, limit: int = 1) -> str:
    """Last non-empty line(s) of the worker log, for the one-line reason."""
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return " | ".join(lines[-limit:])


def _pass_on(progress: RepeatProgress, on_progress: OnProgress | None) -> None:
    """Hand a progress message to ``on_progress``; the display failing on it costs nothing:
    progress is never worth a case."""
    log = logging.getLogger(__name__)
    if on_progress is None:
        return
    try:
        on_progress(progress)
    except Exception:  # a display's fault: the case goes on
        log.debug("progress display failed on %s", progress, exc_info=True)


class WorkerClient:
    def __init__(self, env: Mapping[str, str], log_path: Path) -> None:
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log: IO[bytes] = log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness.runner.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=dict(env),
            start_new_session=True,
        )
        self._buffer = b""

    @property
    def pid(self) -> int:
        return self.proc.pid

    def request(
        self,
        message: Request,
        timeout_s: float,
        on_progress: OnProgress | None = None,
    ) -> Answer:
        """Send one request and wait for its reply; raise :class:`WorkerGone` otherwise.
        Progress lines before the reply go to ``on_progress`` (within the same timeout)."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(message.to_wire()) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.proc.wait()
            raise WorkerGone(self._death()) from None
        deadline = time.monotonic() + timeout_s
        while True:
            reply = self._read_reply(timeout_s, deadline)
            if isinstance(reply, RepeatProgress):
                _pass_on(reply, on_progress)
            elif reply is not None:
                return reply

    def _read_reply(self, timeout_s: float, deadline: float) -> Answer | RepeatProgress | None:
        """The next line's message: None for a progress line that is malformed (dropped)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.kill()
                    raise WorkerGone(
                        f"no reply within {timeout_s:g} s; worker killed", timed_out=True
                    )
                if not selector.select(remaining):
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    self.proc.wait()
                    raise WorkerGone(self._death())
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except ValueError:
            self.kill()  # the stream cannot be trusted any more
            raise WorkerProtocolError(
                f"worker sent a line that is not JSON: {line[:80]!r}; worker stopped"
            ) from None
        if isinstance(reply, dict) and reply.get("op") == PROGRESS_OP:
            try:  # a malformed progress line is dropped: progress is never worth a case
                return RepeatProgress.from_wire(reply)
            except ValueError as exc:
                logging.getLogger(__name__).debug("worker progress line dropped: %s", exc)
                return None
        try:
            message = reply_from_wire(reply)
        except MessageError as exc:
            self.kill()  # what the worker is doing is unknown
            raise WorkerProtocolError(
                f"worker sent a malformed reply: {exc}; worker stopped"
            ) from None
        return message

    def _death(self) -> str:
        reason = describe_exit(self.proc.returncode)
        tail = log_tail(self.log_path)
        return f"{reason}; last log line: {tail}" if tail else reason

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
            self.proc.wait()

    def close(self, grace_s: float = 5.0) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write((json.dumps(ExitRequest().to_wire()) + "\n").encode())
                self.proc.stdin.flush()
                self.proc.wait(timeout=grace_s)
            except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
                self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self._log.close()
