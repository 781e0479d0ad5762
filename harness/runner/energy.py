"""Energy the CPU package drew, where the OS gives it without root: Linux RAPL.

``/sys/class/powercap/intel-rapl:N/energy_uj`` counts microjoules per package (AMD's RAPL shows
there too); it wraps at ``max_energy_range_uj``. Only the top-level domains (``intel-rapl:N``,
not the sub-domains ``intel-rapl:N:M``, which are inside them) are summed. Since 2020 most
distributions make ``energy_uj`` readable by root only (CVE-2020-8694): then there is no reading,
never a guess. Apple silicon's counters (IOReport) are not read yet: ``source`` says which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SOURCE = "rapl"
_TOP_LEVEL = re.compile(r"^intel-rapl:\d+$")


@dataclass(frozen=True)
class EnergyReading:
    """One reading of every package counter: (microjoules, the counter's wrap) each."""

    counters: tuple[tuple[int, int], ...]


def _int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def read_energy(root: Path = Path("/")) -> EnergyReading | None:
    """The package counters now, or None when none is readable."""
    base = root / "sys/class/powercap"
    counters = []
    for domain in sorted(base.glob("intel-rapl:*")):
        if not _TOP_LEVEL.match(domain.name):
            continue
        now, wrap = _int(domain / "energy_uj"), _int(domain / "max_energy_range_uj")
        if now is None:
            return None  # one package unreadable: a sum without it would be wrong
        counters.append((now, wrap or 0))
    return EnergyReading(tuple(counters)) if counters else None


def joules_between(before: EnergyReading | None, after: EnergyReading | None) -> float | None:
    """Joules drawn between two readings (a counter that wrapped once is unwrapped), or None
    when either is missing or the packages differ."""
    if before is None or after is None or len(before.counters) != len(after.counters):
        return None
    total = 0
    for (start, _), (end, wrap) in zip(before.counters, after.counters, strict=True):
        grown = end - start
        if grown < 0:
            if wrap <= 0:
                return None
            grown += wrap
        total += grown
    return total / 1e6
