"""The worker process of a family matrix: ``python -m <worker module> OUT NAME...``.

Each event of the family's :class:`~harness.models.zoo.trial_row.Trial` is appended to ``OUT`` as
one JSON line (``{"arch", "column", "outcome"?, "detail"?}``) and flushed, so the parent knows how
far a family got when this process dies (a segfault in a kernel) or hangs. After each family a
``"done"`` event.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from harness.models.zoo.trial_row import Cell, Trial


def event_line(name: str, column: str, cell: Cell | None) -> str:
    """One event as a JSON line: a column started (no outcome) or ended (with its cell)."""
    record: dict[str, str] = {"arch": name, "column": column}
    if cell is not None:
        record.update(outcome=cell.outcome.value, detail=cell.detail)
    return json.dumps(record) + "\n"


def run(names: Sequence[str], out: TextIO, trial: Trial) -> None:
    """Try each of ``names`` in turn, its events written to ``out`` as they happen."""
    for name in names:

        def write(column: str, cell: Cell | None, name: str = name) -> None:
            out.write(event_line(name, column, cell))
            out.flush()

        trial(name, on_event=write)
        write("done", None)


def main(argv: Sequence[str], trial: Trial) -> int:
    """A worker's command line (``OUT NAME...``), each name tried with ``trial``."""
    out_path, *names = argv
    with Path(out_path).open("a", encoding="utf-8") as out:
        run(names, out, trial)
    return 0
