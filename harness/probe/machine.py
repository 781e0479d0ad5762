"""How much memory this machine has, and how much a model may use (the policy's budget).

Linux: ``/proc/meminfo`` (MemTotal, MemAvailable), capped by a cgroup limit when one is set
(containers). macOS: ``sysctl -n hw.memsize`` and ``vm_stat`` (free + inactive + speculative +
purgeable pages). The limit is a fraction of the total, 0.70 by default as in the field (Metal's
recommended working set on Apple silicon is about that share of unified memory).
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DEFAULT_THRESHOLD = 0.70
CGROUP_FILES = (
    Path("/sys/fs/cgroup/memory.max"),  # cgroup v2
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),  # cgroup v1
)
NO_LIMIT = 1 << 60


@dataclass(frozen=True)
class MemoryBudget:
    """Machine memory in bytes and the share a model may take."""

    total_bytes: int
    available_bytes: int | None  # free for a new process now; None when unknown
    threshold: float = DEFAULT_THRESHOLD
    source: str = ""

    @property
    def limit_bytes(self) -> int:
        return int(self.total_bytes * self.threshold)


def available_memory(
    threshold: float = DEFAULT_THRESHOLD, *, platform: str | None = None
) -> MemoryBudget:
    """This machine's budget; a zero-total budget (source says why) when it cannot be read."""
    if not 0 < threshold <= 1:
        raise ValueError("threshold must be in (0, 1]")
    system = platform or sys.platform
    try:
        if system == "darwin":
            return _macos(threshold)
        if system.startswith("linux"):
            return _linux(threshold)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return MemoryBudget(0, None, threshold, f"unreadable: {exc}")
    return MemoryBudget(0, None, threshold, f"unsupported platform {system}")


def _linux(threshold: float) -> MemoryBudget:
    total, available = parse_meminfo(Path("/proc/meminfo").read_text())
    source = "/proc/meminfo"
    limit = cgroup_limit()
    if limit is not None and limit < total:
        total, source = limit, f"{source} capped by cgroup limit"
        available = min(available, limit) if available is not None else None
    return MemoryBudget(total, available, threshold, source)


def parse_meminfo(text: str) -> tuple[int, int | None]:
    """(MemTotal, MemAvailable) in bytes from ``/proc/meminfo`` text."""
    values = {}
    for line in text.splitlines():
        match = re.match(r"(\w+):\s+(\d+)\s*kB", line)
        if match:
            values[match.group(1)] = int(match.group(2)) * 1024
    if "MemTotal" not in values:
        raise ValueError("no MemTotal in /proc/meminfo")
    return values["MemTotal"], values.get("MemAvailable")


def cgroup_limit(files: tuple[Path, ...] = CGROUP_FILES) -> int | None:
    for file in files:
        try:
            raw = file.read_text().strip()
        except OSError:
            continue
        if raw.isdigit() and int(raw) < NO_LIMIT:
            return int(raw)
    return None


def _macos(threshold: float) -> MemoryBudget:
    total = int(_run(["sysctl", "-n", "hw.memsize"]).strip())
    try:
        available: int | None = parse_vm_stat(_run(["vm_stat"]))
    except (OSError, ValueError, subprocess.SubprocessError):
        available = None
    return MemoryBudget(total, available, threshold, "sysctl hw.memsize, vm_stat")


def _run(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=5).stdout


def parse_vm_stat(text: str) -> int:
    """Reclaimable bytes from ``vm_stat`` output: free + inactive + speculative + purgeable."""
    page = re.search(r"page size of (\d+) bytes", text)
    if page is None:
        raise ValueError("vm_stat: no page size")
    pages = 0
    for name in ("Pages free", "Pages inactive", "Pages speculative", "Pages purgeable"):
        match = re.search(rf"{name}:\s+(\d+)", text)
        if match:
            pages += int(match.group(1))
    return pages * int(page.group(1))
