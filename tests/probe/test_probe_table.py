"""The probe table: capabilities, backend, parser and decision for every zoo family and fixture."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest
from probe_rows import ROWS

from harness.probe.installed import Stack
from harness.probe.machine import MemoryBudget
from harness.probe.policy import decide
from harness.probe.probe import probe_model

PLENTY = MemoryBudget(total_bytes=64 * 1024**3, available_bytes=48 * 1024**3)


def test_table_is_big_enough() -> None:
    assert len(ROWS) >= 25
    assert len({r.name for r in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_probe_row(row, row_paths: Mapping[str, Path], stack: Stack) -> None:  # type: ignore[no-untyped-def]
    probe = probe_model(row_paths[row.name], stack=stack)
    decision = decide(probe, scenario_needs=frozenset(), memory=PLENTY)
    assert probe.capabilities == row.caps
    assert probe.backend is row.backend
    assert probe.tool_parser == row.parser
    assert decision.code is row.code, decision.findings
    support = probe.backend_support()
    assert (support.module if support else None) == row.module


def test_probe_is_fast(row_paths: Mapping[str, Path], stack: Stack) -> None:
    start = time.perf_counter()
    for path in row_paths.values():
        probe_model(path, stack=stack)
    per_model = (time.perf_counter() - start) / len(row_paths)
    assert per_model < 0.1, f"{per_model * 1000:.0f} ms per model"


def test_probe_never_imports_mlx(row_paths: Mapping[str, Path]) -> None:
    code = (
        "import json, sys\n"
        "from harness.probe.probe import probe_model\n"
        "from harness.probe.installed import detect_stack\n"
        "from harness.probe.policy import decide\n"
        "from harness.probe.machine import available_memory\n"
        "stack = detect_stack()\n"
        "for p in json.loads(sys.argv[1]):\n"
        "    decide(probe_model(p, stack=stack), scenario_needs=frozenset(),"
        " memory=available_memory())\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('mlx', 'mlx_lm', 'mlx_vlm', 'mlx_audio', 'transformers'))))\n"
    )
    paths = json.dumps([str(p) for p in row_paths.values()])
    out = subprocess.run([sys.executable, "-c", code, paths], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []
