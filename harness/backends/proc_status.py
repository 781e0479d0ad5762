"""A process's peak resident memory as Linux keeps it: ``VmHWM`` in ``/proc/<pid>/status``."""

from __future__ import annotations

from pathlib import Path


def vm_hwm_bytes(status: Path) -> int | None:
    """The ``VmHWM`` line of a ``/proc/.../status`` file in bytes (None: no such file or line,
    as on macOS)."""
    try:
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None
