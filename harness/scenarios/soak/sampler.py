"""The server's memory over a soak, read every ``every_s`` on the event loop's side (each
reading in a thread, so the requests in flight are not held up): resident memory (RSS), the
physical footprint where macOS gives it, swap in use and memory pressure, each with the
requests finished when it was read.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.backends.base import MemoryUnavailable, Served, ServerMemory
from harness.backends.host_memory import host_memory
from harness.backends.proc_footprint import phys_footprint_bytes


@dataclass(frozen=True)
class Reading:
    t_s: float  # seconds after the soak began
    requests: int  # finished by then
    rss_bytes: int
    footprint_bytes: int | None
    swap_used_bytes: int | None
    pressure: str | None
    stall_pct: float | None


def read_once(model: Served, t_s: float, requests: int) -> Reading | str:
    """One reading, or why the server's memory cannot be read (one line)."""
    memory = model.server_memory()
    if isinstance(memory, MemoryUnavailable):
        return memory.reason
    if not isinstance(memory, ServerMemory):
        return "the server's process is not known"
    footprints = [phys_footprint_bytes(pid) for pid in memory.pids]
    footprint = (
        sum(f for f in footprints if f is not None)
        if footprints and all(f is not None for f in footprints)
        else None
    )
    host = host_memory()
    return Reading(
        t_s,
        requests,
        memory.rss_bytes,
        footprint,
        host.swap_used_bytes,
        host.pressure,
        host.stall_pct,
    )


@dataclass
class Sampler:
    """Readings of ``model``'s memory, ``finished()`` giving the requests done so far."""

    model: Served
    finished: Callable[[], int]
    every_s: float
    start: float = field(default_factory=time.perf_counter)
    readings: list[Reading] = field(default_factory=list)
    why_not: str | None = None

    async def read(self) -> None:
        if self.why_not is not None:
            return
        t = time.perf_counter() - self.start
        found = await asyncio.to_thread(read_once, self.model, t, self.finished())
        if isinstance(found, str):
            self.why_not = found
        else:
            self.readings.append(found)

    async def run(self) -> None:
        """Read until cancelled."""
        while self.why_not is None:
            await self.read()
            await asyncio.sleep(self.every_s)
