"""The process that tries audio families: ``python -m harness.models.zoo.audio_worker OUT NAME...``.

Each event of :func:`~harness.models.zoo.audio_trial.try_audio_family` is appended to ``OUT`` as
one JSON line and flushed (the format of :mod:`harness.models.zoo.arch_worker`), so the parent
knows how far a family got when this process dies or hangs. Offline: a family that would fetch
a codec or tokenizer from the hub fails with that reason instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from harness.models.zoo.arch_trial import Cell
from harness.models.zoo.arch_worker import event_line
from harness.models.zoo.audio_trial import try_audio_family


def run(names: list[str], out: TextIO) -> None:
    for name in names:

        def write(column: str, cell: Cell | None, name: str = name) -> None:
            out.write(event_line(name, column, cell))
            out.flush()

        try_audio_family(name, on_event=write)
        write("done", None)


def main(argv: list[str]) -> int:
    os.environ["HF_HUB_OFFLINE"] = "1"
    out_path, *names = argv
    with Path(out_path).open("a", encoding="utf-8") as out:
        run(names, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
