"""Taking turns with the other pin sets' runs, so their timings are measured side by side.

``mlx-harness run SUITE --pin-set all`` starts one run per pin set at once, each in its own
environment, and passes a turn between them (:mod:`harness.runner.turn_ring`): a run measures
only while it holds the turn, and hands it on after each round of a case
(:mod:`harness.runner.rounds`). Every run plans the same cases in the same order and passes
the same number of turns per case, so round ``r`` of a case is measured under every pin set
before round ``r + 1`` is measured under any: drift of the machine's speed falls on all of
them alike.

A run takes its first turn before it loads its suites and passes it once its record is
started and its cases planned, so start-ups are not measured alongside another's round, and a
run stopped while it waits still records its planned cases as interrupted.

This is the run's side: two pipe descriptors, ``go`` in and ``done`` out, one line each.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass

from harness.runner.signals import RunInterrupted

GO = b"go\n"
DONE = b"done\n"
FLAG = "--turns"  # the hidden ``run`` option: "READ_FD,WRITE_FD"


class TurnsInvalid(ValueError):
    """A ``--turns`` value that does not name two descriptors."""


def coordinator_gone() -> RunInterrupted:
    return RunInterrupted(signal.SIGTERM, why="the pin-set coordinator stopped")


@dataclass
class Turns:
    """The turn this run holds or waits for; ``passed`` counts the turns it handed on."""

    read_fd: int
    write_fd: int
    holding: bool = False
    passed: int = 0
    waited_s: float = 0.0  # seconds spent waiting for the turn (the others' turns), in all

    @classmethod
    def parse(cls, raw: str) -> Turns:
        try:
            read_fd, write_fd = (int(part) for part in raw.split(","))
        except ValueError:
            raise TurnsInvalid(f"{FLAG} {raw!r}: expected READ_FD,WRITE_FD") from None
        return cls(read_fd, write_fd)

    def acquire(self) -> None:
        """Wait for the turn (returns at once when it is held); a coordinator that went
        away stops the run (:class:`RunInterrupted`), as a signal would."""
        if self.holding:
            return
        start = time.perf_counter()
        try:
            self._wait_for_go()
        finally:
            self.waited_s += time.perf_counter() - start
        self.holding = True

    def _wait_for_go(self) -> None:
        line = b""
        while not line.endswith(b"\n"):
            chunk = os.read(self.read_fd, 1)
            if not chunk:
                raise coordinator_gone()
            line += chunk
        if line != GO:
            raise coordinator_gone()

    def release(self) -> None:
        if not self.holding:
            return
        self.holding = False
        try:
            os.write(self.write_fd, DONE)
        except OSError:
            raise coordinator_gone() from None
        self.passed += 1

    def pass_turn(self) -> None:
        """Hand the turn on and wait for it to come back."""
        self.release()
        self.acquire()

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
