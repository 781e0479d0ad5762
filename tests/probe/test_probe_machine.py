"""Machine memory: /proc/meminfo, cgroup limits, macOS sysctl + vm_stat parsing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.probe.machine import (
    available_memory,
    cgroup_limit,
    parse_meminfo,
    parse_vm_stat,
)

MEMINFO = "MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   20000000 kB\n"
VM_STAT = """Mach Virtual Memory Statistics: (page size of 16384 bytes)
Pages free:                               10000.
Pages active:                            500000.
Pages inactive:                           20000.
Pages speculative:                         3000.
Pages wired down:                        100000.
Pages purgeable:                           1000.
"""


def test_parse_meminfo() -> None:
    assert parse_meminfo(MEMINFO) == (24576000 * 1024, 20000000 * 1024)
    with pytest.raises(ValueError):
        parse_meminfo("nothing here")


def test_parse_vm_stat() -> None:
    assert parse_vm_stat(VM_STAT) == (10000 + 20000 + 3000 + 1000) * 16384


def test_cgroup_limit(tmp_path: Path) -> None:
    unlimited, limited = tmp_path / "max", tmp_path / "limit"
    unlimited.write_text("max\n")
    limited.write_text("4294967296\n")
    assert cgroup_limit((unlimited,)) is None
    assert cgroup_limit((tmp_path / "missing", unlimited, limited)) == 4 * 1024**3


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/meminfo")
def test_available_memory_here() -> None:
    budget = available_memory()
    assert budget.total_bytes > 0 and budget.threshold == 0.70
    assert budget.limit_bytes == int(budget.total_bytes * 0.70)
    assert budget.available_bytes is not None and budget.available_bytes <= budget.total_bytes
    assert available_memory(0.5).limit_bytes == int(budget.total_bytes * 0.5)


def test_threshold_and_platform_errors() -> None:
    with pytest.raises(ValueError):
        available_memory(1.5)
    budget = available_memory(platform="plan9")
    assert budget.total_bytes == 0 and "unsupported" in budget.source
