"""A run's pin set in its record: written only when set, read back whole; records without one
(older ones, plain runs) read as None."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.core.types import PinSetInfo
from harness.results.store import RunWriter, load_run
from harness.runner.machine import machine

PIN_SET = PinSetInfo(
    name="lm-0.31.3",
    pins=("mlx-lm==0.31.3", "MLX==0.32.4"),
    resolved={"mlx-lm": "0.31.3", "mlx": "0.32.4", "numpy": "2.3.0"},
)


@pytest.mark.parametrize("pin_set", [PIN_SET, None], ids=["pin_set", "plain"])
def test_round_trip(tmp_path: Path, pin_set: PinSetInfo | None) -> None:
    path = tmp_path / "run.jsonl"
    RunWriter(path).start(
        run_id="r",
        started_at="2026-01-01T00:00:00+00:00",
        machine=machine("x"),
        packages={"mlx": "0.32.4"},
        git_sha=None,
        suites=[],
        pin_set=pin_set,
    )
    head = json.loads(path.read_text().splitlines()[0])
    assert ("pin_set" in head) is (pin_set is not None)  # a plain record reads as before
    assert load_run(path).pin_set == pin_set


def test_pinned_versions_by_the_pins_names() -> None:
    assert PIN_SET.pinned_versions() == {"mlx-lm": "0.31.3", "MLX": "0.32.4"}
