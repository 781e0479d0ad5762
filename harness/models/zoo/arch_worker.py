"""The process that tries architectures: ``python -m harness.models.zoo.arch_worker OUT NAME...``.

Each event of :func:`~harness.models.zoo.arch_trial.try_architecture` is appended to ``OUT`` as
one JSON line (``{"arch", "column", "outcome"?, "detail"?}``) and flushed, so the parent knows how
far an architecture got when this process dies (a segfault in a kernel) or hangs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from harness.models.zoo.arch_trial import Cell, try_architecture


def event_line(arch: str, column: str, cell: Cell | None) -> str:
    """One event as a JSON line: a column started (no outcome) or ended (with its cell)."""
    record: dict[str, str] = {"arch": arch, "column": column}
    if cell is not None:
        record.update(outcome=cell.outcome.value, detail=cell.detail)
    return json.dumps(record) + "\n"


def run(names: list[str], out: TextIO) -> None:
    for name in names:

        def write(column: str, cell: Cell | None, name: str = name) -> None:
            out.write(event_line(name, column, cell))
            out.flush()

        try_architecture(name, on_event=write)
        write("done", None)


def main(argv: list[str]) -> int:
    out_path, *names = argv
    with Path(out_path).open("a", encoding="utf-8") as out:
        run(names, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
