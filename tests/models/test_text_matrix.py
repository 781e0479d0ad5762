"""The matrix runner: workers that die or hang, rows from their events, the per-version cache."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from harness.families.row import ArchRow, Cell, Outcome
from harness.families.text import COLUMNS
from harness.families.text_matrix import (
    Matrix,
    cache_path,
    read,
    rows_from_events,
    run_rows,
    write,
)

# A stand-in worker: "ok" passes every column, "boom" segfaults at "cache", "hang" sleeps there.
FAKE_WORKER = textwrap.dedent(
    """
    import json, os, signal, sys, time
    out, *names = sys.argv[1:]
    with open(out, "a") as f:
        def emit(**e):
            f.write(json.dumps(e) + "\\n"); f.flush()
        for name in names:
            for column in ("generated", "load", "generate", "cache", "trim", "tools"):
                emit(arch=name, column=column)
                if column == "cache" and name == "boom":
                    os.kill(os.getpid(), signal.SIGSEGV)
                if column == "cache" and name == "hang":
                    time.sleep(60)
                emit(arch=name, column=column, outcome="ok", detail=column)
            emit(arch=name, column="done")
    """
)


@pytest.fixture
def fake_worker(tmp_path: Path) -> tuple[str, ...]:
    script = tmp_path / "worker.py"
    script.write_text(FAKE_WORKER)
    return (sys.executable, str(script))


def test_a_dying_worker_costs_one_cell_and_the_run_goes_on(fake_worker: tuple[str, ...]) -> None:
    rows = run_rows(["ok", "boom", "after"], command=fake_worker, timeout_s=30)
    assert [r.name for r in rows] == ["ok", "boom", "after"]
    assert {rows[0].cell(c).outcome for c in COLUMNS} == {Outcome.OK}
    boom = rows[1]
    assert boom.cell("load").outcome is Outcome.OK
    assert boom.cell("cache") == Cell(Outcome.FAILED, "the process died: SIGSEGV")
    assert boom.cell("trim").outcome is Outcome.NOT_RUN
    assert rows[2].cell("tools").outcome is Outcome.OK


def test_a_hanging_worker_is_stopped(fake_worker: tuple[str, ...]) -> None:
    rows = run_rows(["hang", "ok"], command=fake_worker, timeout_s=1)
    assert rows[0].cell("cache").outcome is Outcome.FAILED
    assert "no progress for 1 s" in rows[0].cell("cache").detail
    assert rows[1].cell("trim").outcome is Outcome.OK


@pytest.mark.parametrize(
    ("events", "death", "expected"),
    [
        ([], "the process died: SIGKILL", [("a", Outcome.FAILED)]),
        ([{"arch": "a", "column": "generated"}], "died", [("a", Outcome.FAILED)]),
        (
            [
                {"arch": "a", "column": "generated", "outcome": "not generated", "detail": "x"},
                {"arch": "a", "column": "done"},
            ],
            None,
            [("a", Outcome.NOT_GENERATED)],
        ),
    ],
)
def test_rows_from_events(
    events: list[dict[str, str]], death: str | None, expected: list[tuple[str, Outcome]]
) -> None:
    rows = rows_from_events(["a", "b"], events, death)
    assert [(r.name, r.generated.outcome) for r in rows] == expected


def test_the_cache_is_keyed_by_the_installed_versions(tmp_path: Path) -> None:
    old = cache_path({"mlx-lm": "0.31.3", "mlx": "0.31.0"}, tmp_path)
    new = cache_path({"mlx-lm": "0.32.2", "mlx": "0.31.0"}, tmp_path)
    assert old != new and "0.32.2" in new.name
    row = ArchRow("llama", Cell(Outcome.OK, "1 parameters"), {"load": Cell(Outcome.OK, "x")})
    write(new, Matrix({"mlx-lm": "0.32.2"}, (row,), {"base": "helpers"}, 1.5))
    cached = read(new)
    assert cached is not None and cached.cached
    assert cached.rows[0].cell("load") == Cell(Outcome.OK, "x")
    assert cached.rows[0].cell("trim").outcome is Outcome.NOT_RUN
    assert read(old) is None
    new.write_text("{not json")
    assert read(new) is None
