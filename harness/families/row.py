"""A family trial's row (mlx-lm architectures, mlx-vlm and mlx-audio families alike): its cells,
their outcomes, and the steps that fill them.

A trial reports each column as it starts (``on_event(column, None)``) and as it ends
(``on_event(column, cell)``), "generated" first, so a parent process watching from outside
knows where a worker that died was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from harness.core.exception_line import exception_line


class Outcome(str, Enum):
    OK = "ok"
    ABSENT = "absent"  # the family lacks it (a cache that cannot trim, no tool template)
    FAILED = "failed"
    NOT_GENERATED = "not generated"  # no tiny model could be derived: nothing to try
    NOT_RUN = "not run"  # an earlier column failed (load, cache), so this one could not be tried


@dataclass(frozen=True)
class Cell:
    outcome: Outcome
    detail: str = ""  # one line: what it found, or why not


@dataclass(frozen=True)
class ArchRow:
    """One family: whether a tiny model was generated, and each column's outcome."""

    name: str
    generated: Cell
    cells: dict[str, Cell] = field(default_factory=dict)  # column -> cell, in column order

    def cell(self, column: str) -> Cell:
        if self.generated.outcome is not Outcome.OK:
            return self.cells.get(column, Cell(Outcome.NOT_GENERATED, self.generated.detail))
        return self.cells.get(column, Cell(Outcome.NOT_RUN, "an earlier column failed"))


OnEvent = Callable[[str, Cell | None], None]


class Trial(Protocol):
    """Try one family by name, reporting each column's start and end to ``on_event``."""

    def __call__(self, name: str, *, on_event: OnEvent | None = None) -> ArchRow: ...


class Stop(Exception):
    """A family that cannot go on: its row is complete as it stands."""


def generated(event: OnEvent, generate: Callable[[], str]) -> Cell:
    """The "generated" cell: OK with what ``generate`` says, or NOT_GENERATED with the reason of
    the :class:`Stop` it raised."""
    event("generated", None)
    try:
        cell = Cell(Outcome.OK, generate())
    except Stop as stop:
        cell = Cell(Outcome.NOT_GENERATED, str(stop))
    event("generated", cell)
    return cell


def step(cells: dict[str, Cell], column: str, run: Callable[[], Any], event: OnEvent) -> Any:
    """Run one column's check (``run`` returns a value and the cell); record its cell; raise
    :class:`Stop` when it failed (the family's own error is the cell's finding)."""
    event(column, None)
    try:
        value, cell = run()
    except Exception as exc:
        cells[column] = Cell(Outcome.FAILED, exception_line(exc, 200))
        event(column, cells[column])
        raise Stop from exc
    cells[column] = cell
    event(column, cell)
    return value
