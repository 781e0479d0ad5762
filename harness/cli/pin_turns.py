"""The pin sets' runs taking turns (``run --pin-set ... --pin-set-order interleaved``): all
started at once, the turn handed round them (:mod:`harness.runner.turn_ring`), their output
relayed behind each pin set's name. A stop (Ctrl-C, SIGTERM, SIGHUP) is passed on to every run,
which records its unfinished cases as interrupted and writes its partial report."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from harness.cli.errors import CliError

if TYPE_CHECKING:
    from harness.runner.pin_env import PinEnv


def run_taking_turns(
    runs: Sequence[tuple[PinEnv, list[str]]], log: Path | None = None
) -> tuple[list[int], float]:
    """Each run's exit status (in the order given) and the seconds all of them took; their
    output goes to ``log`` when given (appended), else to this terminal."""
    if log is None:
        names = ", ".join(env.spec.name for env, _ in runs)
        print(f"pin sets {names}: taking turns, a round of each timing case at a time", flush=True)
        return _take_turns(runs, None)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as out:
        return _take_turns(runs, out)


def _take_turns(
    runs: Sequence[tuple[PinEnv, list[str]]], out: IO[str] | None
) -> tuple[list[int], float]:
    from harness.runner.signals import as_interrupt, stop_on_signals
    from harness.runner.turn_ring import Member, run_ring, start_member, stop_members, wait_members

    lock = threading.Lock()
    members: list[Member] = []
    start = time.perf_counter()
    with stop_on_signals():
        try:
            for env, command in runs:
                try:
                    members.append(
                        start_member(env.spec.name, command, env.env(os.environ), lock, out)
                    )
                except OSError as exc:
                    stop_members(members, signal.SIGTERM)
                    wait_members(members)
                    raise CliError(
                        f"pin set {env.spec.name}: cannot start {command[0]} ({exc})"
                    ) from None
            run_ring(members)
        except KeyboardInterrupt as exc:
            stop = as_interrupt(exc)
            print(f"{stop.reason}: stopping the pin sets' runs", flush=True)
            stop_members(members, stop.signum)
        statuses = wait_members(members)
    return statuses, time.perf_counter() - start
