"""The CPU time processes have used (user + system, summed): a server generating tokens burns
it, an idle one does not, whatever else the machine is running."""

from __future__ import annotations

from collections.abc import Iterable


def cpu_seconds(pids: Iterable[int]) -> float | None:
    """User + system CPU seconds of ``pids`` together (None when one cannot be read)."""
    import psutil

    total = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.Error:
            return None
        total += times.user + times.system
    return total
