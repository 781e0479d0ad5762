"""Stopping a run on purpose: SIGINT, SIGTERM and SIGHUP become one exception the drivers catch.

A run stopped this way kills its workers' process groups, records every case it did not finish
as ``interrupted`` and writes a partial report; the exit status is 128 + the signal number
(130 for Ctrl-C, 143 for SIGTERM), as shells report it. Record writes happen with these signals
blocked, so a line is never cut in half by an interrupt.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None
)


class RunInterrupted(KeyboardInterrupt):
    """The run was asked to stop by a signal; a KeyboardInterrupt, so pytest treats it as one."""

    def __init__(self, signum: int = signal.SIGINT, *, why: str | None = None) -> None:
        self.signum = int(signum)
        self.why = why  # a stop that no signal asked for (pytest's -x, --maxfail)
        super().__init__(self.reason)

    @property
    def signal_name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"

    @property
    def reason(self) -> str:
        return self.why or f"interrupted by {self.signal_name}"

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


def as_interrupt(exc: BaseException) -> RunInterrupted:
    """A plain KeyboardInterrupt (Python's own SIGINT handler) as a :class:`RunInterrupted`."""
    return exc if isinstance(exc, RunInterrupted) else RunInterrupted(signal.SIGINT)


def _raise(signum: int, frame: FrameType | None) -> None:
    raise RunInterrupted(signum)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Turn the stop signals into :class:`RunInterrupted` inside the block; restore after.

    Only in the main thread (signal handlers cannot be set elsewhere); a signal the process
    ignores (SIG_IGN, e.g. ``nohup``) stays ignored.
    """
    previous: dict[signal.Signals, Any] = {}
    try:
        for sig in STOP_SIGNALS:
            try:
                current = signal.getsignal(sig)
                if current is signal.SIG_IGN:
                    continue
                previous[sig] = current
                signal.signal(sig, _raise)
            except ValueError:  # not the main thread
                break
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Block the stop signals for a short critical section (a record write); a signal that
    arrives meanwhile is delivered when the block ends."""
    mask: Callable[..., Any] | None = getattr(signal, "pthread_sigmask", None)
    if mask is None:
        yield
        return
    old = mask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, old)
