"""The conditions a bandwidth measurement ran under, so a low ceiling can be told from a busy
machine: the load average before it, the share of all CPUs that other processes kept busy
while it ran (the whole machine's busy CPU time less the measuring process's own), the
busiest of those processes by name, and how long it took.

:func:`watch` starts the watch and returns the function that ends it. psutil (a dependency)
does the counting; where it cannot see (another user's process on macOS, say) a figure is
left out, never guessed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

BUSY_PERCENT = 10.0  # a process using at least this % of one CPU over the measurement is named
BUSY_NAMED = 3  # the busiest this many are named
GUEST_FIELDS = ("guest", "guest_nice")  # Linux counts them in user and nice already
IDLE_FIELDS = ("idle", "iowait")


@dataclass(frozen=True)
class BusyProcess:
    name: str
    cpu_percent: float  # of one CPU, averaged over the measurement


@dataclass(frozen=True)
class Conditions:
    load_average: tuple[float, float, float] | None  # 1, 5 and 15 minutes, before it
    others_cpu_share: float | None  # of all CPUs, while it ran (0..1); None: not readable
    busy_processes: tuple[BusyProcess, ...]  # the busiest other processes, busiest first
    cpu_count: int
    wall_s: float  # how long the measurement took

    def to_json(self) -> dict[str, Any]:
        return {
            "load_average": list(self.load_average) if self.load_average else None,
            "others_cpu_share": self.others_cpu_share,
            "busy_processes": [
                {"name": p.name, "cpu_percent": p.cpu_percent} for p in self.busy_processes
            ],
            "cpu_count": self.cpu_count,
            "wall_s": self.wall_s,
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Conditions:
        load = data.get("load_average")
        share = data.get("others_cpu_share")
        return Conditions(
            load_average=(float(load[0]), float(load[1]), float(load[2])) if load else None,
            others_cpu_share=float(share) if share is not None else None,
            busy_processes=tuple(
                BusyProcess(str(p["name"]), float(p["cpu_percent"]))
                for p in data.get("busy_processes") or ()
            ),
            cpu_count=int(data["cpu_count"]),
            wall_s=float(data["wall_s"]),
        )


def load_average() -> tuple[float, float, float] | None:
    """``os.getloadavg()``, or None where the platform has none (Windows)."""
    try:
        one, five, fifteen = os.getloadavg()
    except (AttributeError, OSError):
        return None
    return (round(one, 2), round(five, 2), round(fifteen, 2))


def busy_and_total_s(times: Any) -> tuple[float, float]:
    """Busy and total CPU seconds of a ``psutil.cpu_times()`` reading (all CPUs together)."""
    values = {k: v for k, v in times._asdict().items() if k not in GUEST_FIELDS}
    total = float(sum(values.values()))
    return total - sum(float(values.get(k, 0.0)) for k in IDLE_FIELDS), total


def others_share(
    system_before: tuple[float, float],
    system_after: tuple[float, float],
    own_busy_s: float,
) -> float | None:
    """The share of all CPUs busy with other processes between two readings: the machine's
    busy CPU seconds less the measuring process's own, over the CPU seconds that passed."""
    busy = system_after[0] - system_before[0]
    total = system_after[1] - system_before[1]
    if total <= 0:
        return None
    return min(1.0, max(0.0, (busy - own_busy_s) / total))


def _own_busy_s(process: Any) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def _primed_others(psutil: Any, own_pid: int) -> list[Any]:
    """Every other process, its CPU counter started (its first reading is always 0)."""
    others = []
    for process in psutil.process_iter():
        if process.pid == own_pid:
            continue
        try:
            process.cpu_percent(None)
        except psutil.Error:
            continue
        others.append(process)
    return others


def _busiest(psutil: Any, others: list[Any]) -> tuple[BusyProcess, ...]:
    found = []
    for process in others:
        try:
            percent = float(process.cpu_percent(None))
            if percent >= BUSY_PERCENT:
                found.append(BusyProcess(process.name(), round(percent, 1)))
        except psutil.Error:
            continue
    found.sort(key=lambda p: -p.cpu_percent)
    return tuple(found[:BUSY_NAMED])


def watch() -> Callable[[], Conditions]:
    """Start watching the machine; call the returned function when the measurement is done."""
    import psutil

    load = load_average()
    own = psutil.Process()
    start_s = time.perf_counter()
    system_before = busy_and_total_s(psutil.cpu_times())
    own_before = _own_busy_s(own)
    others = _primed_others(psutil, own.pid)

    def done() -> Conditions:
        own_busy = _own_busy_s(own) - own_before
        system_after = busy_and_total_s(psutil.cpu_times())
        return Conditions(
            load_average=load,
            others_cpu_share=others_share(system_before, system_after, own_busy),
            busy_processes=_busiest(psutil, others),
            cpu_count=os.cpu_count() or 1,
            wall_s=round(time.perf_counter() - start_s, 3),
        )

    return done
