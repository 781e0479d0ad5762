"""Joining run records: refusals (one line naming both runs), the parts kept through the
record, and the notes for mixed machines, packages and missing shards."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.core.types import (
    CaseResult,
    Machine,
    Metric,
    ModelIdentity,
    RunRecord,
    Shard,
    Status,
    Unit,
)
from harness.results.merge import MergeError, Source, merge_notes, merge_runs
from harness.results.store import write_record

MACHINE = Machine("Darwin", "24.1", "arm64", "Apple M2 Max", 12, 64 * 2**30, "3.12", "mac-a")
OTHER = dataclasses.replace(MACHINE, hostname="mac-b")
PACKAGES = {"mlx": "0.32.4", "mlx-lm": "0.32.2"}


def _run(
    run_id: str,
    models: tuple[str, ...],
    *,
    shard: Shard | None = None,
    machine: Machine = MACHINE,
    packages: dict[str, str | None] = PACKAGES,
) -> RunRecord:
    results = tuple(
        CaseResult(
            f"s::{m}::throughput",
            "s",
            m,
            "throughput",
            Status.PASSED if m != "broken" else Status.FAILED,
            metrics=(Metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, (50.0, 51.0, 49.0)),),
        )
        for m in models
    )
    return RunRecord(
        schema_version=1,
        run_id=run_id,
        started_at="2026-01-01T00:00:00+00:00",
        machine=machine,
        packages=packages,
        git_sha="abc123",
        models={m: ModelIdentity(m, f"/models/{m}", "mlx_lm") for m in models},
        results=results,
        finished_at="2026-01-01T00:10:00+00:00",
        shard=shard,
    )


def _stored(run: RunRecord, root: Path) -> Source:
    """``run`` written as a run writes its record, read back as merge reads it."""
    return Source(str(root / run.run_id), write_record(run, root / run.run_id))


def _shard(index: int, count: int = 3, digest: str = "plan-1") -> Shard:
    return Shard(index, count, plan_cases=3, plan_models=3, plan_sha256=digest)


def test_merged_record_keeps_every_case_and_each_runs_part(tmp_path: Path) -> None:
    sources = [
        _stored(_run("r2", ("b",), shard=_shard(2), machine=OTHER), tmp_path),
        _stored(_run("r1", ("a",), shard=_shard(1)), tmp_path),
        _stored(_run("r3", ("c",), shard=_shard(3)), tmp_path),
    ]
    merged = write_record(merge_runs(sources, "m"), tmp_path / "m")
    assert [r.case_id for r in merged.results] == [f"s::{m}::throughput" for m in "abc"]
    assert [p.run_id for p in merged.parts] == ["r1", "r2", "r3"]  # in shard order
    assert [p.machine.hostname for p in merged.parts] == ["mac-a", "mac-b", "mac-a"]
    assert merged.parts[1].cases == ("s::b::throughput",)
    assert merged.parts[1].shard == _shard(2)
    assert set(merged.models) == {"a", "b", "c"} and merged.finished_at is not None
    # a record merged before merges again: its parts are kept, not folded into one
    again = merge_runs([Source("m", merged)], "m2")
    assert again.parts == merged.parts


def test_mixed_machines_are_named_with_their_models(tmp_path: Path) -> None:
    sources = [
        _stored(_run("r1", ("a", "c"), shard=_shard(1, 2)), tmp_path),
        _stored(_run("r2", ("b",), shard=_shard(2, 2), machine=OTHER), tmp_path),
    ]
    notes = merge_notes(merge_runs(sources, "m"))
    assert notes[0] == "merged from 2 runs: r1 (shard 1/2), r2 (shard 2/2)"
    assert notes[1].startswith("spans 2 machines")
    assert notes[2].startswith("mac-a (Apple M2 Max x12, 64 GiB, Darwin arm64, unknown): ")
    assert notes[2].endswith("2 cases (models a, c) from r1 (shard 1/2)")
    assert notes[3].startswith("mac-b (") and notes[3].endswith(
        "1 case (models b) from r2 (shard 2/2)"
    )


def test_one_machine_says_nothing_of_machines(tmp_path: Path) -> None:
    sources = [_stored(_run(r, (r,)), tmp_path) for r in ("x", "y")]
    assert merge_notes(merge_runs(sources, "m")) == ("merged from 2 runs: x, y",)


def test_differing_packages_and_missing_shards_are_said(tmp_path: Path) -> None:
    older = {**PACKAGES, "mlx-lm": "0.31.3"}
    sources = [
        _stored(_run("r1", ("a",), shard=_shard(1)), tmp_path),
        _stored(_run("r3", ("c",), shard=_shard(3), packages=older), tmp_path),
    ]
    merged = merge_runs(sources, "m")
    assert merged.packages == {"mlx": "0.32.4", "mlx-lm": "0.32.2 | 0.31.3"}
    notes = merge_notes(merged)
    assert "shards 2/3 missing: their models' cases are not in this run" in notes
    assert "package mlx-lm differs between runs: 0.32.2 in r1; 0.31.3 in r3" in notes


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        (
            [_run("r1", ("a",)), _run("r2", ("a", "b"))],
            "case s::a::throughput is in both {root}/r1 and {root}/r2; a case may come from "
            "one run only (merge each shard once)",
        ),
        (
            [_run("r1", ("a",), shard=_shard(1)), _run("r2", ("b",), shard=_shard(2, 4))],
            "{root}/r1 (shard 1/3) and {root}/r2 (shard 2/4) are shards of different plans; "
            "run every shard with the same suites, -k and N",
        ),
        (
            [_run("r1", ("a",), shard=_shard(1)), _run("r2", ("b",), shard=_shard(2, 3, "other"))],
            "{root}/r1 (shard 1/3) and {root}/r2 (shard 2/3) are shards of different plans",
        ),
        (
            [_run("r1", (), shard=_shard(3)), _run("r2", (), shard=_shard(3))],
            "{root}/r1 and {root}/r2 are both shard 3/3; give each shard's run once",
        ),
    ],
    ids=["same_case_twice", "different_n", "different_plan", "same_shard_twice"],
)
def test_refusals_name_both_runs(tmp_path: Path, runs: list[RunRecord], message: str) -> None:
    sources = [_stored(run, tmp_path) for run in runs]
    with pytest.raises(MergeError) as caught:
        merge_runs(sources, "m")
    assert str(caught.value).startswith(message.format(root=tmp_path))


def test_the_same_run_twice_is_refused(tmp_path: Path) -> None:
    source = _stored(_run("r1", ()), tmp_path)
    with pytest.raises(MergeError, match="hold the same run \\(r1\\); give each run once"):
        merge_runs([source, source], "m")


def test_plain_records_are_written_as_before(tmp_path: Path) -> None:
    """No shard, no parts: the start line has no new keys, so older versions read it."""
    source = _stored(_run("r1", ("a",)), tmp_path)
    start = json.loads((tmp_path / "r1" / "run.jsonl").read_text().splitlines()[0])
    assert "shard" not in start and "parts" not in start
    assert source.run.shard is None and source.run.parts == ()
