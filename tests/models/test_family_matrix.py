"""Any family matrix: a spec's worker runs (a worker that dies costs one cell), rows from
events, the JSON and its cache per installed version, counts per column."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.families.matrix import FamilyMatrix, MatrixSpec, column_counts, write
from harness.families.row import ArchRow, Cell, Outcome

COLUMNS = ("one", "two")
SPEC = MatrixSpec("test-matrix", ("pytest",), 7, COLUMNS, "rows", ("false",), 30.0)


class _Matrix(FamilyMatrix):
    spec = SPEC


def test_a_worker_that_cannot_start_fails_the_first_name_only(tmp_path: Path) -> None:
    rows = SPEC.run_rows(["a", "b"], command=(sys.executable, "-c", "raise SystemExit(3)"))
    assert [(r.name, r.generated.outcome) for r in rows] == [
        ("a", Outcome.FAILED),
        ("b", Outcome.FAILED),
    ]
    assert rows[0].generated.detail == "the process exited with status 3"


def _events(name: str, *columns: tuple[str, str | None]) -> list[dict[str, str]]:
    out = []
    for column, outcome in columns:
        event = {"arch": name, "column": column}
        if outcome is not None:
            event.update(outcome=outcome, detail=column)
        out.append(event)
    return out


@pytest.mark.parametrize(
    ("events", "death", "expected"),
    [
        (  # a complete row, then a family the worker died in at "one"
            _events("a", ("generated", "ok"), ("one", "ok"), ("two", "ok"), ("done", None))
            + _events("b", ("generated", "ok"), ("one", None)),
            "died",
            [("a", "ok", "ok", "ok"), ("b", "ok", "failed", "not run")],
        ),
        ([], "died", [("a", "failed", "not generated", "not generated")]),
        ([], None, [("a", "failed", "not generated", "not generated")]),  # ended, said nothing
        (  # died while generating
            _events("a", ("generated", None)),
            "died",
            [("a", "failed", "not generated", "not generated")],
        ),
        (  # ended cleanly in the middle of a family: failed where it was
            _events("a", ("generated", None), ("generated", "ok"), ("one", None)),
            None,
            [("a", "ok", "failed", "not run")],
        ),
        (
            _events("a", ("generated", "not generated"), ("done", None)),
            None,
            [("a", "not generated", "not generated", "not generated")],
        ),
    ],
)
def test_rows_from_events(
    events: list[dict[str, str]], death: str | None, expected: list[tuple[str, ...]]
) -> None:
    rows = SPEC.rows_from_events(["a", "b", "c"], events, death)
    got = [
        (
            r.name,
            r.generated.outcome.value,
            r.cell("one").outcome.value,
            r.cell("two").outcome.value,
        )
        for r in rows
    ]
    assert got == expected


ROW = ArchRow("x", Cell(Outcome.OK, "made"), {"one": Cell(Outcome.FAILED, "ValueError: y")})


def test_json_round_trip_through_the_cache(tmp_path: Path) -> None:
    made = _Matrix({"pytest": "9.0"}, (ROW,), 2.25)
    path = SPEC.cache_path(made.versions, tmp_path)
    assert path == tmp_path / "test-matrix" / "pytest-9.0_v7.json"
    write(path, made)
    data: dict[str, Any] = json.loads(path.read_text())
    assert list(data) == ["matrix_version", "versions", "wall_s", "rows"]
    assert data["rows"][0]["two"] == {"outcome": "not run", "detail": "an earlier column failed"}
    back = _Matrix.read(path)
    assert back is not None and back.cached and back.versions == made.versions
    assert back.rows[0].cell("one") == ROW.cell("one")


@pytest.mark.parametrize(
    "text", ['{"matrix_version": 6}', "{}", "{not json", '{"matrix_version": 7}']
)
def test_a_cache_of_another_version_or_unreadable_is_a_miss(tmp_path: Path, text: str) -> None:
    path = tmp_path / "m.json"
    path.write_text(text)
    assert _Matrix.read(path) is None
    assert _Matrix.read(tmp_path / "absent.json") is None


def test_cached_or_run_caches_complete_runs_only(tmp_path: Path) -> None:
    runs: list[list[str]] = []

    def run(names: list[str], **_kwargs: object) -> list[ArchRow]:
        runs.append(names)
        return [ArchRow(n, Cell(Outcome.NOT_GENERATED, "fake")) for n in names]

    def every() -> list[str]:
        return ["a", "b"]

    options: dict[str, Any] = {"force": False, "root": tmp_path, "on_row": None}
    some = _Matrix.cached_or_run(every, run, names=["b"], **options)
    assert [r.name for r in some.rows] == ["b"] and not some.cached
    made = _Matrix.cached_or_run(every, run, names=None, **options)
    again = _Matrix.cached_or_run(every, run, names=None, **options)
    assert again.cached and [r.name for r in again.rows] == [r.name for r in made.rows]
    assert again.counts() == made.counts()
    assert runs == [["b"], ["a", "b"]]
    _Matrix.cached_or_run(every, run, names=None, **{**options, "force": True})
    assert runs[-1] == ["a", "b"]


def test_column_counts_put_generated_first() -> None:
    counts = column_counts([ROW, ArchRow("n", Cell(Outcome.NOT_GENERATED, "no"))], COLUMNS)
    assert list(counts) == ["generated", "one", "two"]
    assert counts["one"] == {Outcome.FAILED: 1, Outcome.NOT_GENERATED: 1}
    assert counts["two"] == {Outcome.NOT_RUN: 1, Outcome.NOT_GENERATED: 1}
