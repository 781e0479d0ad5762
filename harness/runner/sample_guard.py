"""The machine's state under every sample of a case, and whether the samples can be trusted.

In the worker, around one case: the full :class:`~harness.runner.machine_state.MachineState`
before and after it, and at each boundary between its runs (the progress the scenario reports,
:mod:`harness.runner.repeat_progress`) a cheap CPU reading: the CPU seconds of the whole machine
and of our own process tree (the harness's process that started this worker, the worker, and any
server it started). What is left, the CPU time of **other processes** (and time the hypervisor
gave to other machines, ``steal``), is what competes with the measurement; the load average
counts the model itself and so judges nothing on its own.

A measured run is flagged when other processes took more than :data:`BUSY_OTHERS_PCT` of the
machine's CPU time while it ran (runs shorter than :data:`MIN_JUDGED_S` are judged together, as
the counters tick in 10 ms, and any span needs :data:`MIN_OTHERS_CPU_S` of others' CPU time, so
a tick or two of a kernel thread over a few milliseconds is not "busy"); the case is dirty when
a run was flagged, the whole measured span was busy, the state before or after is dirty
(throttled, thermal warning, on battery, Low Power Mode, memory pressure), or swap grew over it.
The record's ``machine_state`` artifact (:mod:`harness.results.machine_flags` reads it) holds
all of it; gates and compare refuse to judge a dirty case unless told to
(``--allow-dirty-machine``).

Before the case, ``cooldown_s`` of sleep and up to ``wait_for_quiet_s`` of waiting for the
other processes to leave the CPU; both count towards the case's ``timeout_s``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.results.machine_flags import ARTIFACT, BUSY
from harness.runner.energy import SOURCE as ENERGY_SOURCE
from harness.runner.energy import EnergyReading, joules_between, read_energy
from harness.runner.machine_state import MachineState, read_state, swapped

BUSY_OTHERS_PCT = 25.0  # other processes took more than this share of every CPU's time
MIN_JUDGED_S = 0.5  # a run shorter than this is too short for the 10 ms CPU counters alone
# and however short the span, "busy" needs more CPU time from others than a few 10 ms ticks:
# over a 20 ms span one tick of a kernel thread reads as 50% of two CPUs
MIN_OTHERS_CPU_S = 0.05
QUIET_WINDOW_S = 1.0  # wait-for-quiet: the machine is quiet after a window this long
QUIET_POLL_S = 0.25


@dataclass(frozen=True)
class CpuReading:
    """CPU seconds so far: the machine's busy time (every CPU, steal included), the steal
    alone, and our process tree's; ``at`` is ``time.monotonic()``."""

    at: float
    busy_s: float
    steal_s: float
    ours_s: float
    load1: float | None
    energy: EnergyReading | None = None


def _tree_seconds(root_pid: int) -> float:
    """CPU seconds of ``root_pid`` and every process under it, with their reaped children's
    (a process that ended between two readings is then counted in its parent's)."""
    import psutil

    try:
        root = psutil.Process(root_pid)
        processes = [root, *root.children(recursive=True)]
    except (psutil.Error, OSError):
        return 0.0
    total = 0.0
    for process in processes:
        try:
            t = process.cpu_times()
        except (psutil.Error, OSError):
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def cpu_reading(root_pid: int) -> CpuReading:
    import psutil

    times = psutil.cpu_times()
    idle = times.idle + getattr(times, "iowait", 0.0)
    steal = float(getattr(times, "steal", 0.0))
    busy = sum(times) - idle - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
    try:
        load1: float | None = os.getloadavg()[0]
    except OSError:
        load1 = None
    return CpuReading(time.monotonic(), busy, steal, _tree_seconds(root_pid), load1, read_energy())


@dataclass(frozen=True)
class Span:
    """What happened between two readings: seconds, and shares of the machine's CPU time."""

    seconds: float
    others_pct: float | None  # other processes' CPU time (steal included), % of all CPUs'
    ours_pct: float | None
    steal_pct: float | None
    load1: float | None  # at its end
    joules: float | None = None
    others_s: float | None = None  # other processes' CPU seconds (None: not known)

    @classmethod
    def between(cls, start: CpuReading, end: CpuReading, cpus: int) -> Span:
        seconds = max(end.at - start.at, 0.0)
        capacity = seconds * max(cpus, 1)
        if capacity <= 0:
            return cls(seconds, None, None, None, end.load1)
        ours = max(end.ours_s - start.ours_s, 0.0)
        others = max(end.busy_s - start.busy_s - ours, 0.0)
        steal = max(end.steal_s - start.steal_s, 0.0)
        return cls(
            seconds,
            min(100.0 * others / capacity, 100.0),
            min(100.0 * ours / capacity, 100.0),
            min(100.0 * steal / capacity, 100.0),
            end.load1,
            joules_between(start.energy, end.energy),
            others,
        )

    def busy(self) -> bool:
        """Others took more than :data:`BUSY_OTHERS_PCT` of the CPUs, and more than a few
        counter ticks of CPU time (a span too short for the share alone)."""
        if self.others_pct is None or self.others_pct <= BUSY_OTHERS_PCT:
            return False
        return self.others_s is None or self.others_s >= MIN_OTHERS_CPU_S


def busy_reason(others_pct: float, load1: float | None, where: str = "") -> str:
    """``machine busy (load 3.1, 45% CPU in other processes)``."""
    load = f"load {load1:.1f}, " if load1 is not None else ""
    return f"{BUSY} ({load}{others_pct:.0f}% CPU in other processes{where})"


@dataclass(frozen=True)
class RunSpan:
    first: int  # the measured runs it covers, 1-based (first == last: one run)
    last: int
    span: Span
    with_warmups: bool = False  # a batch whose runs were not reported one by one

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "runs": [self.first, self.last],
            "seconds": round(self.span.seconds, 4),
        }
        for key in ("others_pct", "ours_pct", "steal_pct", "load1", "joules"):
            value = getattr(self.span, key)
            if value is not None:
                out[key] = round(value, 3)
        if self.with_warmups:
            out["with_warmups"] = True
        return out


Reader = Callable[[], CpuReading]


@dataclass
class SampleGuard:
    """Follows one case in the worker: :meth:`begin`, then :meth:`batch_begin` before each
    batch and :meth:`progress` on each run's progress, then :meth:`finish`."""

    read: Reader
    state: Callable[[], MachineState] = read_state
    cpus: int = field(default_factory=lambda: os.cpu_count() or 1)
    judge_busy: bool = True  # False when the served model runs outside our tree (``url:``)
    sleep: Callable[[float], None] = time.sleep
    before: MachineState | None = None
    runs: list[RunSpan] = field(default_factory=list)
    _mark: CpuReading | None = None
    _measured: int = 0  # measured runs closed so far
    _pending_warmups: bool = False  # the open span started before this batch's warm-ups
    waited_s: float = 0.0
    quiet: bool | None = None
    cooldown_s: float = 0.0

    def settle(self, cooldown_s: float, wait_for_quiet_s: float) -> None:
        """Before the case: sleep ``cooldown_s``, then wait up to ``wait_for_quiet_s`` for a
        window of :data:`QUIET_WINDOW_S` in which other processes stay under the busy line."""
        if cooldown_s > 0:
            self.cooldown_s = cooldown_s
            self.sleep(cooldown_s)
        if wait_for_quiet_s <= 0:
            return
        start = self.read()
        window = start
        while True:
            now = self.read()
            if now.at - window.at >= QUIET_WINDOW_S:
                if not Span.between(window, now, self.cpus).busy():
                    self.quiet = True
                    break
                window = now
            if now.at - start.at >= wait_for_quiet_s:
                self.quiet = False
                break
            self.sleep(QUIET_POLL_S)
        self.waited_s = max(now.at - start.at, 0.0)

    def begin(self) -> None:
        self.before = self.state()

    def batch_begin(self, warmup: int) -> None:
        self._mark = self.read()
        self._pending_warmups = warmup > 0

    def progress(self, repeat: int, warmup: bool) -> None:
        """A run ended (``repeat``: its number among the warm-ups or the measured runs; a
        batch that reported none of its runs gives one for all of them, warm-ups included)."""
        now = self.read()
        if warmup:
            self._mark, self._pending_warmups = now, False
            return
        if self._mark is not None and repeat > self._measured:
            span = Span.between(self._mark, now, self.cpus)
            self.runs.append(RunSpan(self._measured + 1, repeat, span, self._pending_warmups))
            self._measured = repeat
        self._mark, self._pending_warmups = now, False

    def finish(self, tokens: int | None = None) -> dict[str, Any]:
        """The ``machine_state`` artifact (see the module's note); ``tokens``: what the
        measured runs generated, for joules per token."""
        after = self.state()
        before = self.before or after
        dirty = [*dict.fromkeys([*before.dirty(), *after.dirty()])]
        grown = swapped(before, after)
        if grown:
            dirty.append(grown)
        flagged = self._flagged()
        whole = self._whole()
        out: dict[str, Any] = {"before": before.to_json(), "after": after.to_json()}
        if whole is not None:
            summary = RunSpan(1, self._measured, whole).to_json()
            out.update({k: v for k, v in summary.items() if k != "runs"})
        if self.judge_busy:
            if flagged:
                worst = max(flagged, key=lambda r: r.span.others_pct or 0.0)
                where = (
                    f" in run {worst.first}"
                    if worst.first == worst.last
                    else f" in runs {worst.first}-{worst.last}"
                )
                dirty.insert(0, busy_reason(worst.span.others_pct or 0.0, worst.span.load1, where))
            elif whole is not None and whole.busy():
                dirty.insert(0, busy_reason(whole.others_pct or 0.0, whole.load1))
        else:
            out["busy_not_judged"] = "the served model runs outside the harness's processes"
        out["runs"] = [r.to_json() for r in self.runs]
        out["flagged_runs"] = sorted({n for r in flagged for n in range(r.first, r.last + 1)})
        out["dirty"] = dirty
        energy = self._energy(tokens)
        if energy:
            out["energy"] = energy
        if self.cooldown_s:
            out["cooldown_s"] = self.cooldown_s
        if self.quiet is not None:
            out["waited_for_quiet_s"] = round(self.waited_s, 3)
            out["quiet"] = self.quiet
        return {ARTIFACT: out}

    def _flagged(self) -> list[RunSpan]:
        if not self.judge_busy:
            return []
        return [r for r in self.runs if r.span.seconds >= MIN_JUDGED_S and r.span.busy()]

    def _whole(self) -> Span | None:
        """The measured runs together: their seconds, and their CPU shares weighted by them."""
        spans = [r.span for r in self.runs]
        seconds = sum(s.seconds for s in spans)
        if not spans or seconds <= 0:
            return None

        def weighted(key: str) -> float | None:
            values = [(getattr(s, key), s.seconds) for s in spans]
            if any(v is None for v, _ in values):
                return None
            return sum(v * w for v, w in values) / seconds

        joules = [s.joules for s in spans]
        others = [s.others_s for s in spans]
        return Span(
            seconds,
            weighted("others_pct"),
            weighted("ours_pct"),
            weighted("steal_pct"),
            spans[-1].load1,
            None if any(j is None for j in joules) else sum(j for j in joules if j is not None),
            None if any(o is None for o in others) else sum(o for o in others if o is not None),
        )

    def _energy(self, tokens: int | None) -> dict[str, Any]:
        joules = [r.span.joules for r in self.runs]
        if not joules or any(j is None for j in joules):
            return {}
        total = sum(j for j in joules if j is not None)
        out: dict[str, Any] = {"source": ENERGY_SOURCE, "joules": round(total, 4)}
        if any(r.with_warmups for r in self.runs):
            out["with_warmups"] = True  # runs not reported one by one: no honest J/token
        elif tokens:
            out["joules_per_token"] = total / tokens
        return out
