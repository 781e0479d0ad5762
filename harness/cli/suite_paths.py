"""The suite files a command was given: files named on the command line, directories searched
for them (``validate``, ``run``, ``bisect``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harness.cli.errors import CliError

SUITE_SUFFIXES = (".suite.yaml", ".suite.yml")  # what pytest collects too


def suite_paths(paths: Iterable[str]) -> list[Path]:
    """Suite files named on the command line, directories searched for them (recursively).

    Anything else is a one-line error naming the path: nothing to find, a directory without
    suites, a file whose name pytest would not collect, a pipe, socket or device.
    """
    import stat

    from harness.spec.errors import one_line
    from harness.spec.suite_text import file_kind

    found: list[Path] = []
    for raw in paths:
        path, shown = Path(raw), one_line(raw)
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            raise CliError(f"{shown}: no such file or directory") from None
        except OSError as exc:
            raise CliError(f"{shown}: cannot read ({exc.strerror}); check the path") from None
        if stat.S_ISDIR(mode):
            suites = sorted(p for s in SUITE_SUFFIXES for p in path.rglob(f"*{s}"))
            if not suites:
                raise CliError(
                    f"{shown}: no *.suite.yaml files in this directory (or below it); "
                    "give a suite file or a directory that holds some"
                )
            found.extend(suites)
        elif not stat.S_ISREG(mode):
            raise CliError(f"{shown}: {file_kind(mode)}, not a suite file; give a *.suite.yaml")
        elif not path.name.endswith(SUITE_SUFFIXES):
            raise CliError(
                f"{shown}: not a suite file (the name must end in .suite.yaml, as pytest "
                "collects); rename it, or list it under a suite's include:"
            )
        else:
            found.append(path)
    return found
