"""The process that tries VLM families: ``python -m harness.runner.vlm_worker OUT NAME...``.

Each event of :func:`~harness.runner.vlm_trial.try_vision_family` is appended to ``OUT``
as one JSON line and flushed (the format of :mod:`harness.models.zoo.arch_worker`), so the
parent knows how far a family got when this process dies or hangs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from harness.models.zoo.arch_trial import Cell
from harness.models.zoo.arch_worker import event_line
from harness.runner.vlm_trial import try_vision_family


def run(names: list[str], out: TextIO) -> None:
    for name in names:

        def write(column: str, cell: Cell | None, name: str = name) -> None:
            out.write(event_line(name, column, cell))
            out.flush()

        try_vision_family(name, on_event=write)
        write("done", None)


def main(argv: list[str]) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    out_path, *names = argv
    with Path(out_path).open("a", encoding="utf-8") as out:
        run(names, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
