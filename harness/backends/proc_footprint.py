"""A process's physical footprint as macOS accounts it (what Activity Monitor's "Memory" column
and ``footprint`` show: resident memory plus compressed and GPU-wired pages charged to it),
read with ``proc_pid_rusage`` from libproc. Elsewhere, or for a process this user may not read,
there is none (None): RSS is the figure then.
"""

from __future__ import annotations

import sys

RUSAGE_INFO_V0 = 0
# rusage_info_v0: a 16-byte uuid, then uint64 fields; ri_phys_footprint is the eighth
PHYS_FOOTPRINT_OFFSET = 16 + 7 * 8
BUFFER_BYTES = 512  # larger than any rusage_info version


def phys_footprint_bytes(pid: int) -> int | None:
    """``ri_phys_footprint`` of ``pid`` (macOS only; None elsewhere or when it cannot be read)."""
    if sys.platform != "darwin":
        return None
    import ctypes
    import ctypes.util

    path = ctypes.util.find_library("proc") or "/usr/lib/libproc.dylib"
    try:
        libproc = ctypes.CDLL(path)
    except OSError:
        return None
    buffer = ctypes.create_string_buffer(BUFFER_BYTES)
    pointer = ctypes.c_void_p(ctypes.addressof(buffer))
    if libproc.proc_pid_rusage(
        ctypes.c_int(pid), ctypes.c_int(RUSAGE_INFO_V0), ctypes.byref(pointer)
    ):
        return None
    return int.from_bytes(buffer.raw[PHYS_FOOTPRINT_OFFSET : PHYS_FOOTPRINT_OFFSET + 8], "little")
