"""The machine's memory state: Linux's pressure stall line parsed; every reading is a value or
None, never an error; the macOS-only figures are None elsewhere."""

from __future__ import annotations

import sys

from harness.backends.host_memory import host_memory, metal_wired_limit_bytes, psi_some_avg10
from harness.backends.proc_footprint import phys_footprint_bytes

PSI = "some avg10=1.50 avg60=0.20 avg300=0.00 total=123\nfull avg10=0.00 avg60=0.00 total=0\n"


def test_psi_line() -> None:
    assert psi_some_avg10(PSI) == 1.5
    assert psi_some_avg10("full avg10=3.0") is None
    assert psi_some_avg10("some avg10=x") is None


def test_readings_never_raise() -> None:
    found = host_memory()
    assert found.swap_used_bytes is None or found.swap_used_bytes >= 0
    if sys.platform != "darwin":
        assert found.pressure is None
        assert metal_wired_limit_bytes() is None
        assert phys_footprint_bytes(1) is None
