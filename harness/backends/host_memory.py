"""The machine's memory state while a server runs: swap in use, memory pressure, and on macOS
the Metal wired limit (how much memory the GPU may wire: ``iogpu.wired_limit_mb``, 0 meaning
the system's default share).

Pressure is the operating system's own word: macOS's ``kern.memorystatus_vm_pressure_level``
(1 normal, 2 warning, 4 critical), Linux's pressure stall information (``/proc/pressure/memory``,
the share of the last 10 s some task waited on memory, in percent). Each reading is None where
the system does not give it; none raises.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

MIB = 1 << 20
PSI_MEMORY = Path("/proc/pressure/memory")
MACOS_PRESSURE = {1: "normal", 2: "warning", 4: "critical"}


@dataclass(frozen=True)
class HostMemory:
    """Swap in use (bytes) and memory pressure (``pressure``: the system's word; ``stall_pct``:
    Linux's share of time stalled on memory) at one moment."""

    swap_used_bytes: int | None
    pressure: str | None
    stall_pct: float | None


def swap_used_bytes() -> int | None:
    import psutil

    try:
        return int(psutil.swap_memory().used)
    except (OSError, RuntimeError):
        return None


def _sysctl_int(name: str) -> int | None:
    """An integer sysctl of macOS, read with ``sysctlbyname`` (None elsewhere or unknown)."""
    if sys.platform != "darwin":
        return None
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.dylib")
    except OSError:
        return None
    value = ctypes.c_int64(0)
    size = ctypes.c_size_t(ctypes.sizeof(value))
    if libc.sysctlbyname(name.encode(), ctypes.byref(value), ctypes.byref(size), None, 0):
        return None
    return int.from_bytes(
        ctypes.string_at(ctypes.addressof(value), size.value), "little", signed=True
    )


def psi_some_avg10(text: str) -> float | None:
    """``avg10`` of the ``some`` line of a ``/proc/pressure/memory`` text."""
    for line in text.splitlines():
        if line.startswith("some "):
            for field in line.split()[1:]:
                key, _, value = field.partition("=")
                if key == "avg10":
                    try:
                        return float(value)
                    except ValueError:
                        return None
    return None


def host_memory() -> HostMemory:
    """Swap and pressure now."""
    level = _sysctl_int("kern.memorystatus_vm_pressure_level")
    if level is not None:
        return HostMemory(swap_used_bytes(), MACOS_PRESSURE.get(level, str(level)), None)
    try:
        stall = psi_some_avg10(PSI_MEMORY.read_text())
    except OSError:
        stall = None
    return HostMemory(swap_used_bytes(), None, stall)


def metal_wired_limit_bytes() -> int | None:
    """macOS's Metal wired limit in bytes (``iogpu.wired_limit_mb``; 0: the default share);
    None elsewhere."""
    mib = _sysctl_int("iogpu.wired_limit_mb")
    return None if mib is None else mib * MIB
