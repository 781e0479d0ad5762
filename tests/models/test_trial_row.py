"""A trial's row: the "generated" cell and the steps that fill a row's cells, with the events
a watching parent sees."""

from __future__ import annotations

from typing import Any

import pytest

from harness.families.row import ArchRow, Cell, Outcome, Stop, generated, step


def _recorder() -> tuple[list[tuple[str, Cell | None]], Any]:
    seen: list[tuple[str, Cell | None]] = []
    return seen, lambda column, cell: seen.append((column, cell))


def _made() -> str:
    return "3 parameters"


def _refused() -> str:
    raise Stop("no Model class")


@pytest.mark.parametrize(
    ("generate", "expected"),
    [
        (_made, Cell(Outcome.OK, "3 parameters")),
        (_refused, Cell(Outcome.NOT_GENERATED, "no Model class")),
    ],
)
def test_generated(generate: Any, expected: Cell) -> None:
    seen, event = _recorder()
    assert generated(event, generate) == expected
    assert seen == [("generated", None), ("generated", expected)]


def test_step_records_its_cell_and_returns_the_value() -> None:
    seen, event = _recorder()
    cells: dict[str, Cell] = {}
    assert step(cells, "load", lambda: (42, Cell(Outcome.OK, "loaded")), event) == 42
    assert cells == {"load": Cell(Outcome.OK, "loaded")}
    assert seen == [("load", None), ("load", Cell(Outcome.OK, "loaded"))]


def test_a_failing_step_is_a_failed_cell_on_one_line_and_stops() -> None:
    seen, event = _recorder()
    cells: dict[str, Cell] = {}

    def boom() -> tuple[None, Cell]:
        raise ValueError("bad\nshape")

    with pytest.raises(Stop):
        step(cells, "run", boom, event)
    assert cells["run"].outcome is Outcome.FAILED
    assert "bad" in cells["run"].detail and "\n" not in cells["run"].detail
    assert seen[-1] == ("run", cells["run"])


@pytest.mark.parametrize(
    ("generated_cell", "expected"),
    [
        (Cell(Outcome.OK, "made"), Cell(Outcome.NOT_RUN, "an earlier column failed")),
        (Cell(Outcome.NOT_GENERATED, "why"), Cell(Outcome.NOT_GENERATED, "why")),
    ],
)
def test_a_missing_cell(generated_cell: Cell, expected: Cell) -> None:
    assert ArchRow("x", generated_cell).cell("load") == expected
