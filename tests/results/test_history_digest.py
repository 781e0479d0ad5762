"""Runs read once into digests: the same points as reading whole records, kept in an index that
a rebuild reuses, and flagged nights left out of the fit."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from history_nights import BUSY, DECODE, Plan, write_night, write_nights
from history_records import find_runs

from harness.results.digest import digest_record, digest_run, from_plain, to_plain
from harness.results.history import Collector, read_digests, series
from harness.results.history_index import INDEX_FILE, IndexCounts, indexed_digests
from harness.results.store import load_run

GOLDEN = Path(__file__).parent / "data" / "golden"
PLAN = Plan(nights=12, cases=3, models=("m0", "m1"), step_at=6, flagged=range(2, 4), seed=1)


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_nights(tmp_path_factory.mktemp("nights") / "reports", PLAN)


def _records() -> list[Path]:
    return sorted(GOLDEN.glob("*/run.jsonl"))


@pytest.mark.parametrize("record", _records(), ids=lambda p: p.parent.name)
def test_a_digest_holds_what_the_whole_record_holds(record: Path) -> None:
    read = digest_run(record)
    whole = digest_record(load_run(record))
    assert read.summaries == whole.summaries
    assert read.head.machine == whole.head.machine and read.head.models == whole.head.models
    assert read.head.packages == whole.head.packages and read.source == str(record)
    assert from_plain(to_plain(read)) == read


def test_a_digest_keeps_the_dirty_reasons_and_only_the_metrics_asked(nights: Path) -> None:
    digest = digest_run(nights / "night-0002", lambda name: name == DECODE)
    assert {s.metric for s in digest.summaries} == {DECODE}
    assert len(digest.summaries) == 3 and all(s.dirty == (BUSY,) for s in digest.summaries)
    assert all(s.low <= s.median <= s.high and s.count == 5 for s in digest.summaries)
    assert all(s.dirty == () for s in digest_run(nights / "night-0004").summaries)


def test_streamed_series_equal_series_from_whole_records(nights: Path) -> None:
    collector = Collector(DECODE)
    for digest in read_digests([nights], lambda name: name == DECODE):
        collector.add(digest)
    streamed = list(collector.series())
    whole = series(find_runs([nights]), DECODE)
    assert [s.points for s in streamed] == [
        tuple(
            dataclasses.replace(p, source=q.source) for p, q in zip(w.points, s.points, strict=True)
        )
        for w, s in zip(whole, streamed, strict=True)
    ]
    assert [s.steps for s in streamed] == [w.steps for w in whole]


def test_flagged_nights_are_kept_as_points_but_not_fitted(nights: Path) -> None:
    collector = Collector(DECODE)
    for digest in read_digests([nights]):
        collector.add(digest)
    for s in collector.series():
        assert [i for i, p in enumerate(s.points) if p.dirty] == [2, 3]
        assert [step.index for step in s.steps] == [6]
        (step,) = s.steps
        assert -0.22 < step.change < -0.18 and "mlx: 0.32.4 -> 0.33.0" in step.causes


def test_the_index_reuses_unchanged_records_and_rereads_changed_ones(
    nights: Path, tmp_path: Path
) -> None:
    reports = tmp_path / "reports"
    shutil.copytree(nights, reports)
    index = tmp_path / INDEX_FILE
    first = IndexCounts()
    assert len(list(indexed_digests([reports], index, first))) == 12
    assert (len(first.read), first.reused) == (12, 0)

    again = IndexCounts()
    digests = list(indexed_digests([reports], index, again))
    assert (again.read, again.reused) == ([], 12)
    assert digests == list(read_digests([reports]))

    (reports / "night-0004" / "run.jsonl").unlink()
    write_night(reports, Plan(nights=12, cases=2), 4)  # rewritten: another size
    shutil.rmtree(reports / "night-0011")
    changed = IndexCounts()
    assert len(list(indexed_digests([reports], index, changed))) == 11
    assert changed.read == [str(reports / "night-0004" / "run.jsonl")]
    assert (changed.reused, changed.dropped) == (10, 1)


def test_a_damaged_index_is_started_afresh(nights: Path, tmp_path: Path) -> None:
    index = tmp_path / INDEX_FILE
    index.write_bytes(b"not a database at all" * 100)
    counts = IndexCounts()
    assert len(list(indexed_digests([nights], index, counts))) == 12
    assert len(counts.read) == 12
    counts = IndexCounts()
    assert len(list(indexed_digests([nights], index, counts))) == 12
    assert counts.reused == 12


def test_history_marks_flagged_runs_and_names_the_step(
    nights: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.cli import main
    from harness.drive.exit_rules import ALLOW_DIRTY_ENV

    monkeypatch.delenv(ALLOW_DIRTY_ENV)
    assert main(["history", str(nights), "--metric", DECODE]) == 0
    out = capsys.readouterr().out
    assert out.count(f"(flagged, not fitted: {BUSY})") == 3 * len(PLAN.flagged)
    assert out.count("<- step -") == 3 and out.count("mlx: 0.32.4 -> 0.33.0") == 3
    assert out.count("1 step(s) over 12 runs") == 3
    # judged anyway when told: still marked
    assert main(["history", str(nights), "--metric", DECODE, "--allow-dirty-machine"]) == 0
    out = capsys.readouterr().out
    assert out.count(f"(flagged, fitted anyway: {BUSY})") == 3 * len(PLAN.flagged)
