from __future__ import annotations

import random
from pathlib import Path

import pytest
from history_records import find_runs

from harness.core.types import CaseResult, Machine, Metric, RunRecord, Status, Unit
from harness.results.history import series
from harness.results.store import RunReadWarning, RunWriter
from harness.runner.machine import machine

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
    with pytest.warns(RunReadWarning, match="broken/run.jsonl:1: not a JSON line"):
        assert [r.run_id for r in find_runs([tmp_path])] == ["id-a", "id-b"]


def _record(folder: Path, run_id: str, started_at: str) -> None:
    writer = RunWriter(folder / "run.jsonl")
    writer.start(
        run_id=run_id,
        started_at=started_at,
        machine=machine("x"),
        packages={},
        git_sha=None,
        suites=[],
    )
    writer.close()


def test_find_runs_skips_unreadable_records_with_a_warning(tmp_path: Path) -> None:
    _record(tmp_path / "good", "good", "2026-01-01")
    (tmp_path / "binary").mkdir()
    (tmp_path / "binary" / "run.jsonl").write_bytes(bytes(range(255, -1, -1)))
    (tmp_path / "newer").mkdir()
    (tmp_path / "newer" / "run.jsonl").write_text('{"event": "run_start", "schema_version": 9}\n')
    (tmp_path / "latest").symlink_to("good")  # the pointer to the newest run, not a run
    (tmp_path / ".latest-old.1.tmp").mkdir()  # a copy being swapped out by a publisher
    _record(tmp_path / ".latest-old.1.tmp", "stale", "2026-01-02")
    with pytest.warns(RunReadWarning) as caught:
        runs = find_runs([tmp_path, tmp_path / "missing"])
    assert [r.run_id for r in runs] == ["good"]
    lines = [str(w.message) for w in caught]
    assert len(lines) == 3
    assert lines[0].startswith(f"{tmp_path / 'binary' / 'run.jsonl'}:1: not UTF-8 text")
    assert lines[0].endswith("; skipped this record")
    assert "schema_version 9 is newer" in lines[1]
    assert lines[2] == f"{tmp_path / 'missing'}: no such file or folder; skipped"


def test_find_runs_reads_latest_when_it_is_named(tmp_path: Path) -> None:
    _record(tmp_path / "r1", "r1", "2026-01-01")
    (tmp_path / "latest").symlink_to("r1")
    assert [r.run_id for r in find_runs([tmp_path / "latest"])] == ["r1"]
    assert [r.run_id for r in find_runs([tmp_path, tmp_path / "latest"])] == ["r1"]


def test_a_changed_model_starts_its_own_series_naming_the_change() -> None:
    """The hub revision moved to 4-bit files at similar speed: two series, not one series with
    no step; the second names what changed."""
    import dataclasses

    from harness.core.types import ModelIdentity

    def with_model(run: RunRecord, revision: str, weights: int) -> RunRecord:
        identity = ModelIdentity("m", "/m", "mlx_lm", revision=revision, weights_bytes=weights)
        return dataclasses.replace(run, models={"m": identity})

    runs = [with_model(_run(i, 100.0), "a" * 40, 538_000_000) for i in range(6)]
    runs += [with_model(_run(i, 99.0), "b" * 40, 98_000_000) for i in range(6, 12)]
    first, second = series(runs, "throughput.decode_tps")
    assert [len(first.points), len(second.points)] == [6, 6]
    assert first.identity == "mlx_lm, revision aaaaaaaaaaaa, weights 513.1 MiB"
    assert first.changed_from_before == ()
    assert second.changed_from_before == (
        "model files changed: revision aaaaaaaaaaaa -> bbbbbbbbbbbb, weights 513.1 MiB -> 93.5 MiB",
    )
    assert first.steps == () and second.steps == ()
