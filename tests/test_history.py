from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.history import find_runs, fit_steps, series
from harness.runner.machine import machine
from harness.store import RunWriter
from harness.types import CaseResult, Machine, Metric, RunRecord, Status, Unit

MACHINE = Machine("Linux", "6", "x86_64", "cpu", 2, 1 << 34, "3.11")


def _run(i: int, decode: float, mlx: str = "0.32.4", seed: int = 0) -> RunRecord:
    rng = random.Random(seed * 1000 + i)
    samples = tuple(rng.gauss(decode, decode * 0.01) for _ in range(5))
    result = CaseResult(
        "s::m::throughput",
        "s",
        "m",
        "throughput",
        Status.PASSED,
        metrics=(Metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, samples),),
    )
    return RunRecord(
        1, f"run{i:02d}", f"2026-01-{i + 1:02d}", MACHINE, {"mlx": mlx}, "g", results=(result,)
    )


def test_fit_steps_finds_the_change_point() -> None:
    assert fit_steps([1.0] * 5 + [2.0] * 5, penalty=0.1) == [0, 5]
    assert fit_steps([1.0] * 10, penalty=0.1) == [0]


@pytest.mark.parametrize("seed", range(5))
def test_a_slowdown_is_one_step_attributed_to_the_package_that_changed(seed: int) -> None:
    runs = [_run(i, 100.0, seed=seed) for i in range(8)]
    runs += [_run(i, 85.0, mlx="0.33.0", seed=seed) for i in range(8, 16)]
    (s,) = series(runs, "throughput.decode_tps")
    assert [step.index for step in s.steps] == [8]
    step = s.steps[0]
    assert -0.17 < step.change < -0.13
    assert "mlx: 0.32.4 -> 0.33.0" in step.causes


@pytest.mark.parametrize("seed", range(5))
def test_noise_alone_has_no_steps(seed: int) -> None:
    (s,) = series([_run(i, 100.0, seed=seed) for i in range(20)], "throughput.decode_tps")
    assert s.steps == ()


def test_find_runs_reads_directories_and_skips_latest(tmp_path: Path) -> None:
    for name in ("a", "b", "latest"):
        writer = RunWriter(tmp_path / name / "run.jsonl")
        writer.start(
            run_id=f"id-{name}",
            started_at=name,
            machine=machine("x"),
            packages={},
            git_sha=None,
            suites=[],
        )
        writer.close()
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "run.jsonl").write_text("nonsense\n")
    assert [r.run_id for r in find_runs([tmp_path])] == ["id-a", "id-b"]
