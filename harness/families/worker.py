"""The one worker process of every family sweep: ``python -m harness.families.worker KIND OUT
NAME...``, KIND one of :data:`KINDS` (``text``, ``vision``, ``audio``): the trial it runs.

Each event of the family's :class:`~harness.families.row.Trial` is appended to ``OUT`` as one
JSON line (``{"arch", "column", "outcome"?, "detail"?}``) and flushed, so the parent knows how
far a family got when this process dies (a segfault in a kernel) or hangs. After each family a
``"done"`` event. The vision and audio workers run offline: a family that would fetch a codec,
tokenizer or processor from the hub fails with that reason instead.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TextIO

from harness.families.row import Cell, Trial


def _text() -> Trial:
    from harness.families.text import try_architecture

    return try_architecture


def _vision() -> Trial:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from harness.families.vision import try_vision_family

    return try_vision_family


def _audio() -> Trial:
    os.environ["HF_HUB_OFFLINE"] = "1"
    from harness.families.audio import try_audio_family

    return try_audio_family


# KIND -> the trial its worker runs (set up for it: the environment, then the import)
KINDS: Mapping[str, Callable[[], Trial]] = MappingProxyType(
    {"text": _text, "vision": _vision, "audio": _audio}
)


def command(kind: str) -> tuple[str, ...]:
    """The command of a ``kind`` worker process (given OUT NAME...)."""
    return (sys.executable, "-m", "harness.families.worker", kind)


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
    """A worker's command line after its kind (``OUT NAME...``), each name tried with ``trial``."""
    out_path, *names = argv
    with Path(out_path).open("a", encoding="utf-8") as out:
        run(names, out, trial)
    return 0


def cli(argv: Sequence[str]) -> int:
    """``KIND OUT NAME...``: the names tried with the trial of ``KIND``."""
    kind, *rest = argv
    return main(rest, KINDS[kind]())


if __name__ == "__main__":
    sys.exit(cli(sys.argv[1:]))
