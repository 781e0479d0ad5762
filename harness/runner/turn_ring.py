"""The coordinator's side of taking turns (:mod:`harness.runner.turns`): one run per pin set,
started together, the turn handed round them in rounds.

In round ``k`` every run still going gets the turn once, in an order that rotates by one each
round (A B C, B C A, C A B, ...), so no pin set is always measured first after another's
work. A run that ends (its last case done, or stopped, or crashed) closes its pipe and leaves
the ring; the others go on. Each run's output is relayed line by line behind its pin set's
name, so lines never mix.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO

from harness.runner.turns import DONE, FLAG, GO

STOP_GRACE_S = 120.0  # a stopped run writes its partial report before it exits


@dataclass
class Member:
    """One pin set's run: its process and the two ends of its turn pipes that we hold."""

    name: str
    proc: subprocess.Popen[bytes]
    go_fd: int  # we write "go" here
    done_fd: int  # and read "done" here
    relays: list[threading.Thread] = field(default_factory=list)

    def give_turn(self) -> bool:
        """The turn to this run until it hands it back; False when the run has gone."""
        if self.go_fd < 0:
            return False
        try:
            os.write(self.go_fd, GO)
        except OSError:
            return False
        line = b""
        while not line.endswith(b"\n"):
            chunk = os.read(self.done_fd, 1)
            if not chunk:
                return False
            line += chunk
        return line == DONE

    def close_pipes(self) -> None:
        """Close our ends once (a descriptor number closed twice may be another file's)."""
        for fd in (self.go_fd, self.done_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    continue
        self.go_fd = self.done_fd = -1


def _relay(stream: IO[bytes], prefix: str, out: IO[str], lock: threading.Lock) -> None:
    for raw in iter(stream.readline, b""):
        text = raw.decode("utf-8", errors="replace").rstrip("\n")
        with lock:
            print(f"{prefix}{text}", file=out, flush=True)
    stream.close()


def start_member(
    name: str,
    command: Sequence[str],
    env: Mapping[str, str],
    lock: threading.Lock,
    out: IO[str] | None = None,
) -> Member:
    """Start ``command`` (a ``run`` of one pin set) with its turn pipes; it waits for the turn
    before it does anything that costs time. Its own session: a stop reaches it from us.
    Its output and errors go to ``out`` when given, else to ours."""
    go_read, go_write = os.pipe()
    done_read, done_write = os.pipe()
    try:
        proc = subprocess.Popen(
            [*command, FLAG, f"{go_read},{done_write}"],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(go_read, done_write),
            start_new_session=True,
        )
    except OSError:
        for fd in (go_read, go_write, done_read, done_write):
            os.close(fd)
        raise
    os.close(go_read)
    os.close(done_write)
    member = Member(name, proc, go_write, done_read)
    assert proc.stdout is not None and proc.stderr is not None
    for stream, sink in ((proc.stdout, out or sys.stdout), (proc.stderr, out or sys.stderr)):
        thread = threading.Thread(
            target=_relay, args=(stream, f"[{name}] ", sink, lock), daemon=True
        )
        thread.start()
        member.relays.append(thread)
    return member


def run_ring(members: Sequence[Member]) -> None:
    """Hand the turn round until every run has left the ring."""
    live = list(members)
    rotation = 0
    while live:
        start = rotation % len(live)
        for member in [*live[start:], *live[:start]]:
            if not member.give_turn():
                member.close_pipes()
                live.remove(member)
        rotation += 1


def stop_members(members: Sequence[Member], signum: int) -> None:
    """Pass a stop on to every run still going; each stops its workers, records what it did
    not finish as interrupted and writes its partial report."""
    for member in members:
        if member.proc.poll() is None:
            try:
                os.kill(member.proc.pid, signum)
            except ProcessLookupError:
                continue


def wait_members(members: Sequence[Member], timeout_s: float = STOP_GRACE_S) -> list[int]:
    """Each run's exit status, once it has ended (killed after ``timeout_s``)."""
    statuses = []
    for member in members:
        try:
            status = member.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(member.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                member.proc.kill()
            status = member.proc.wait()
        for thread in member.relays:
            thread.join(timeout=5.0)
        member.close_pipes()
        statuses.append(status if status >= 0 else 128 - status)
    return statuses
