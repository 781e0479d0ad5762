"""The machine's state around a sample: parsers on recorded outputs of both OSes (macOS's
written from the documented formats of pmset and sysctl), a Linux tree in a temporary root,
the dirty verdicts, and one real reading of this machine."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.runner.machine_state import (
    MachineState,
    parse_pmset_batt,
    parse_pmset_settings,
    parse_pmset_therm,
    parse_psi,
    parse_swap_meminfo,
    parse_swapusage,
    parse_vm_pressure_level,
    read_state,
    swapped,
)

THERM_COOL = """\
Note: No thermal warning level has been recorded
Note: No performance warning level has been recorded
2024-05-02 10:01:12 +0200 CPU Power notify
\tCPU_Scheduler_Limit \t= 100
\tCPU_Available_CPUs \t= 10
\tCPU_Speed_Limit \t= 100
"""
THERM_HOT = """\
Thermal warning level set to 2.
Note: No performance warning level has been recorded
2024-05-02 10:07:40 +0200 CPU Power notify
\tCPU_Scheduler_Limit \t= 100
\tCPU_Available_CPUs \t= 10
\tCPU_Speed_Limit \t= 61
"""
BATT_AC = """\
Now drawing from 'AC Power'
 -InternalBattery-0 (id=4653155)\t100%; charged; 0:00 remaining present: true
"""
BATT_BATTERY = """\
Now drawing from 'Battery Power'
 -InternalBattery-0 (id=4653155)\t83%; discharging; 6:12 remaining present: true
"""
PMSET_LOW = """\
System-wide power settings:
Currently in use:
 standby              1
 lowpowermode         1
 sleep                1
"""
SWAPUSAGE = "vm.swapusage: total = 2048.00M  used = 1291.25M  free = 756.75M  (encrypted)\n"
PSI = (
    "some avg10=12.50 avg60=3.10 avg300=0.80 total=81234567\n"
    "full avg10=1.00 avg60=0.20 avg300=0.05 total=123\n"
)
MEMINFO = "MemTotal:       24683656 kB\nSwapTotal:       2097148 kB\nSwapFree:        1048572 kB\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [(THERM_COOL, (100, None)), (THERM_HOT, (61, "2")), ("", (None, None))],
)
def test_pmset_therm(text: str, expected: tuple[int | None, str | None]) -> None:
    assert parse_pmset_therm(text) == expected


@pytest.mark.parametrize(
    ("parse", "text", "expected"),
    [
        (parse_pmset_batt, BATT_AC, False),
        (parse_pmset_batt, BATT_BATTERY, True),
        (parse_pmset_batt, "", None),
        (parse_pmset_settings, PMSET_LOW, True),
        (
            parse_pmset_settings,
            PMSET_LOW.replace("lowpowermode         1", "lowpowermode 0"),
            False,
        ),
        (parse_pmset_settings, "System-wide power settings:\n sleep 1\n", None),
        (parse_swapusage, SWAPUSAGE, int(1291.25 * 2**20)),
        (parse_swapusage, "", None),
        (parse_vm_pressure_level, "1\n", "normal"),
        (parse_vm_pressure_level, "4", "critical"),
        (parse_vm_pressure_level, "", None),
        (parse_psi, PSI, 12.5),
        (parse_psi, "", None),
        (parse_swap_meminfo, MEMINFO, 1048576 * 1024),
        (parse_swap_meminfo, "MemTotal: 1 kB\n", None),
    ],
)
def test_parsers(parse: object, text: str, expected: object) -> None:
    assert parse(text) == expected  # type: ignore[operator]


def test_a_hot_mac_on_battery_is_dirty() -> None:
    outputs = {
        ("pmset", "-g", "therm"): THERM_HOT,
        ("pmset", "-g", "batt"): BATT_BATTERY,
        ("pmset", "-g"): PMSET_LOW,
        ("sysctl", "vm.swapusage"): SWAPUSAGE,
        ("sysctl", "-n", "kern.memorystatus_vm_pressure_level"): "2\n",
    }

    def run(argv: Sequence[str]) -> str | None:
        return outputs.get(tuple(argv))

    state = read_state("darwin", Path("/nonexistent"), run)
    assert state.dirty() == (
        "throttled: CPU speed limit 61%",
        "thermal warning: 2",
        "on battery",
        "Low Power Mode on",
        "memory pressure warn",
    )
    outputs.update(
        {
            ("pmset", "-g", "therm"): THERM_COOL,
            ("pmset", "-g", "batt"): BATT_AC,
            ("pmset", "-g"): "",
            ("sysctl", "-n", "kern.memorystatus_vm_pressure_level"): "1",
        }
    )
    assert read_state("darwin", Path("/nonexistent"), run).dirty() == ()


def _linux_tree(root: Path, *, discharging: bool) -> None:
    def put(path: str, text: str) -> None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)

    put("proc/pressure/memory", PSI)
    put("proc/meminfo", MEMINFO)
    for cpu, khz in (("cpu0", "1200000"), ("cpu1", "2400000")):
        put(f"sys/devices/system/cpu/{cpu}/cpufreq/scaling_cur_freq", khz + "\n")
        put(f"sys/devices/system/cpu/{cpu}/cpufreq/cpuinfo_max_freq", "3600000\n")
        put(f"sys/devices/system/cpu/{cpu}/cpufreq/scaling_governor", "powersave\n")
    put("sys/class/thermal/thermal_zone0/temp", "48000\n")
    put("sys/class/thermal/thermal_zone1/temp", "91500\n")
    put("sys/class/power_supply/AC/type", "Mains\n")
    put("sys/class/power_supply/AC/online", "0\n" if discharging else "1\n")
    put("sys/class/power_supply/BAT0/type", "Battery\n")
    put("sys/class/power_supply/BAT0/status", "Discharging\n" if discharging else "Full\n")


def test_a_linux_laptop_on_battery_under_memory_pressure(tmp_path: Path) -> None:
    _linux_tree(tmp_path, discharging=True)
    state = read_state("linux", tmp_path)
    assert (state.cpu_mhz, state.cpu_max_mhz, state.governor) == (1800.0, 3600.0, "powersave")
    assert state.hottest_c == 91.5
    assert state.swap_used_bytes == 1048576 * 1024
    assert state.dirty() == ("on battery", "memory pressure: tasks waited 12% of 10 s")
    plugged = tmp_path / "plugged"
    _linux_tree(plugged, discharging=False)
    assert read_state("linux", plugged).on_battery is False


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (0, 0, None),
        (100 << 20, 120 << 20, None),
        (100 << 20, 300 << 20, "swapping: swap in use grew 200 MiB"),
        (None, 300 << 20, None),
    ],
)
def test_swapping_over_a_sample(
    before: int | None, after: int | None, expected: str | None
) -> None:
    assert (
        swapped(MachineState(swap_used_bytes=before), MachineState(swap_used_bytes=after))
        == expected
    )


def test_the_load_alone_judges_nothing() -> None:
    """The load counts the model being measured: it is recorded, never judged alone."""
    state = MachineState(load_average=(5.2, 3.0, 1.0), cpu_count=2)
    assert state.dirty() == ()
    assert state.to_json() == {"load_average": [5.2, 3.0, 1.0], "cpu_count": 2}


def test_this_machine_is_read() -> None:
    """Whatever this machine exposes; nothing raises and the load is known."""
    state = read_state()
    assert state.cpu_count >= 1 and state.load_average is not None
