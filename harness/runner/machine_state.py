"""The machine's state around a sample, read without root, so a sample taken while the machine was
throttled, on battery, in Low Power Mode, busy or swapping can be told apart (issue 30, item 1).

Linux: the load average, memory pressure (PSI ``/proc/pressure/memory``), swap in use
(``/proc/meminfo``), CPU frequency and governor (cpufreq) and the hottest thermal zone
(``/sys/class/thermal``), the power source (``/sys/class/power_supply``). macOS: the CPU speed
limit and thermal warning level (``pmset -g therm``), the power source (``pmset -g batt``), Low
Power Mode (``pmset -g``), swap (``sysctl vm.swapusage``) and the kernel's memory-pressure level
(``sysctl kern.memorystatus_vm_pressure_level``). Every reader is a pure parser of the text the
OS gives, tested on recorded outputs; what cannot be read is None, never guessed.

:meth:`MachineState.dirty` names what makes a sample untrustworthy; :func:`swapped` compares the
state before and after a sample.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PRESSURE_SOME_AVG10 = 10.0  # % of the last 10 s some task waited on memory: swapping or reclaim
SWAP_GROWTH_BYTES = 64 << 20  # swap in use grew this much over a sample: it was swapping


@dataclass(frozen=True)
class MachineState:
    """One reading. Units: per cent, bytes, MHz, degrees Celsius."""

    load_average: tuple[float, float, float] | None = None
    cpu_count: int = 0
    cpu_speed_limit_pct: int | None = None  # macOS: 100 unless the OS slows the CPU
    thermal_warning: str | None = None  # macOS: the recorded thermal warning level, if any
    cpu_mhz: float | None = None  # Linux: the mean current frequency of the CPUs
    cpu_max_mhz: float | None = None
    governor: str | None = None
    hottest_c: float | None = None
    on_battery: bool | None = None
    low_power_mode: bool | None = None
    swap_used_bytes: int | None = None
    memory_pressure: str | None = None  # "normal", "warn", "critical" or "some avg10=X%"
    memory_pressure_pct: float | None = None  # Linux PSI some avg10

    def dirty(self) -> tuple[str, ...]:
        """Why a sample taken in this state cannot be trusted (empty when it can).

        The load average is recorded but judges nothing: it counts the model being measured.
        A busy machine is judged on the CPU time other processes took
        (:mod:`harness.runner.sample_guard`)."""
        reasons = []
        if self.cpu_speed_limit_pct is not None and self.cpu_speed_limit_pct < 100:
            reasons.append(f"throttled: CPU speed limit {self.cpu_speed_limit_pct}%")
        if self.thermal_warning:
            reasons.append(f"thermal warning: {self.thermal_warning}")
        if self.on_battery:
            reasons.append("on battery")
        if self.low_power_mode:
            reasons.append("Low Power Mode on")
        if self.memory_pressure in ("warn", "critical"):
            reasons.append(f"memory pressure {self.memory_pressure}")
        if self.memory_pressure_pct is not None and self.memory_pressure_pct > PRESSURE_SOME_AVG10:
            reasons.append(f"memory pressure: tasks waited {self.memory_pressure_pct:.0f}% of 10 s")
        return tuple(reasons)

    def to_json(self) -> dict[str, Any]:
        """The fields that were read (None left out), for the record."""
        out = {k: v for k, v in dataclasses.asdict(self).items() if v is not None}
        if self.load_average is not None:
            out["load_average"] = [round(x, 2) for x in self.load_average]
        return out


def swapped(before: MachineState, after: MachineState) -> str | None:
    """``"swapping: ..."`` when swap in use grew over the sample, else None."""
    if before.swap_used_bytes is None or after.swap_used_bytes is None:
        return None
    grown = after.swap_used_bytes - before.swap_used_bytes
    if grown >= SWAP_GROWTH_BYTES:
        return f"swapping: swap in use grew {grown / 2**20:.0f} MiB"
    return None


# -- macOS parsers ---------------------------------------------------------------------------


def parse_pmset_therm(text: str) -> tuple[int | None, str | None]:
    """``pmset -g therm``: (CPU_Speed_Limit %, the thermal warning level when one is recorded)."""
    limit = re.search(r"CPU_Speed_Limit\s*=\s*(\d+)", text)
    warning = None
    level = re.search(r"thermal warning level (?:set to|is) (\w+)", text, re.I)
    if level and "no thermal warning" not in text.lower():
        warning = level.group(1)
    return (int(limit.group(1)) if limit else None), warning


def parse_pmset_batt(text: str) -> bool | None:
    """``pmset -g batt``: True when drawing from the battery."""
    found = re.search(r"drawing from '([^']+)'", text)
    if not found:
        return None
    return "battery" in found.group(1).lower()


def parse_pmset_settings(text: str) -> bool | None:
    """``pmset -g``: Low Power Mode (``lowpowermode 1``), None when the line is absent."""
    found = re.search(r"^\s*lowpowermode\s+(\d)", text, re.M)
    return found.group(1) == "1" if found else None


_SIZE = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_swapusage(text: str) -> int | None:
    """``sysctl vm.swapusage``: bytes of swap in use."""
    found = re.search(r"used\s*=\s*([\d.]+)([KMG])", text)
    return int(float(found.group(1)) * _SIZE[found.group(2)]) if found else None


def parse_vm_pressure_level(text: str) -> str | None:
    """``sysctl -n kern.memorystatus_vm_pressure_level``: 1 normal, 2 warn, 4 critical."""
    return {"1": "normal", "2": "warn", "4": "critical"}.get(text.strip())


# -- Linux parsers ---------------------------------------------------------------------------


def parse_psi(text: str) -> float | None:
    """``/proc/pressure/memory``: the ``some avg10`` percentage."""
    found = re.search(r"^some\s+avg10=([\d.]+)", text, re.M)
    return float(found.group(1)) if found else None


def parse_swap_meminfo(text: str) -> int | None:
    """``/proc/meminfo``: SwapTotal - SwapFree, in bytes."""
    values = dict(re.findall(r"^(Swap\w+):\s+(\d+) kB", text, re.M))
    if "SwapTotal" not in values or "SwapFree" not in values:
        return None
    return (int(values["SwapTotal"]) - int(values["SwapFree"])) * 1024


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def linux_power(root: Path) -> bool | None:
    """On battery: an AC/USB supply that is offline while a battery discharges."""
    supplies = sorted((root / "sys/class/power_supply").glob("*"))
    mains = [s for s in supplies if (_read(s / "type") or "").strip() in ("Mains", "USB")]
    batteries = [s for s in supplies if (_read(s / "type") or "").strip() == "Battery"]
    if not batteries:
        return None  # a desktop or a server: always on mains
    if any((_read(s / "online") or "").strip() == "1" for s in mains):
        return False
    return any((_read(b / "status") or "").strip() == "Discharging" for b in batteries)


def linux_cpufreq(root: Path) -> tuple[float | None, float | None, str | None]:
    """(mean current MHz, max MHz, governor) over the CPUs cpufreq lists."""
    current, maximum, governors = [], [], set()
    for cpu in sorted((root / "sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq")):
        now, top = _read(cpu / "scaling_cur_freq"), _read(cpu / "cpuinfo_max_freq")
        if now and now.strip().isdigit():
            current.append(int(now) / 1000)
        if top and top.strip().isdigit():
            maximum.append(int(top) / 1000)
        governor = _read(cpu / "scaling_governor")
        if governor:
            governors.add(governor.strip())
    mean = sum(current) / len(current) if current else None
    return mean, (max(maximum) if maximum else None), ("/".join(sorted(governors)) or None)


def linux_hottest(root: Path) -> float | None:
    temps = []
    for zone in (root / "sys/class/thermal").glob("thermal_zone*"):
        text = _read(zone / "temp")
        if text and text.strip().lstrip("-").isdigit():
            temps.append(int(text) / 1000)
    return max(temps) if temps else None


# -- reading ---------------------------------------------------------------------------------

Run = Callable[[Sequence[str]], str | None]


def _command(argv: Sequence[str]) -> str | None:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def read_state(
    platform: str = sys.platform, root: Path = Path("/"), run: Run = _command
) -> MachineState:
    """The state now (``root`` and ``run`` let tests give recorded files and outputs)."""
    try:
        load = os.getloadavg() if root == Path("/") else None
    except OSError:
        load = None
    cpus = os.cpu_count() or 0
    if platform == "darwin":
        limit, warning = parse_pmset_therm(run(["pmset", "-g", "therm"]) or "")
        level = parse_vm_pressure_level(
            run(["sysctl", "-n", "kern.memorystatus_vm_pressure_level"]) or ""
        )
        return MachineState(
            load_average=load,
            cpu_count=cpus,
            cpu_speed_limit_pct=limit,
            thermal_warning=warning,
            on_battery=parse_pmset_batt(run(["pmset", "-g", "batt"]) or ""),
            low_power_mode=parse_pmset_settings(run(["pmset", "-g"]) or ""),
            swap_used_bytes=parse_swapusage(run(["sysctl", "vm.swapusage"]) or ""),
            memory_pressure=level,
        )
    mhz, max_mhz, governor = linux_cpufreq(root)
    pressure = parse_psi(_read(root / "proc/pressure/memory") or "")
    return MachineState(
        load_average=load,
        cpu_count=cpus,
        cpu_mhz=mhz,
        cpu_max_mhz=max_mhz,
        governor=governor,
        hottest_c=linux_hottest(root),
        on_battery=linux_power(root),
        swap_used_bytes=parse_swap_meminfo(_read(root / "proc/meminfo") or ""),
        memory_pressure=None if pressure is None else f"some avg10={pressure:.2f}%",
        memory_pressure_pct=pressure,
    )
