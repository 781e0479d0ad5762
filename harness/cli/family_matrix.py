"""What the ``mlx-harness models *-sweep`` commands (the family sweeps; ``*-matrix`` before) share:
the options, the check of ``--only`` names, a row on one line and the summary, for any family sweep
(:mod:`harness.families.matrix`); a :class:`MatrixCommand` holds what differs."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeVar

from harness.cli.errors import CliError
from harness.families.matrix import RowsMatrix
from harness.families.row import ArchRow, Cell, Outcome
from harness.report.escape import visible

M = TypeVar("M", bound=RowsMatrix)

SHORT = MappingProxyType(
    {
        Outcome.OK: "ok",
        Outcome.ABSENT: "no",
        Outcome.FAILED: "FAIL",
        Outcome.NOT_GENERATED: "-",
        Outcome.NOT_RUN: ".",
    }
)


@dataclass(frozen=True)
class MatrixCommand:
    """One ``models`` subcommand showing a family sweep."""

    name: str  # "arch-sweep"
    help: str
    columns: tuple[str, ...]  # the matrix's, after "generated"
    width: int  # characters of the name on a row's line
    unknown: str  # what an --only name that is no family is ("not an architecture of ...")
    hint: str = ""  # after the unknown names: how names are spelled
    metavar: str = "MODULE"  # of --only
    # column -> separator: an OK cell of that column shows its detail up to it, not just "ok"
    details: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


def run_matrix(
    args: argparse.Namespace,
    command: MatrixCommand,
    *,
    known: Callable[[], Sequence[str]],
    matrix: Callable[..., M],
    summary: Callable[[M], str],
) -> int:
    """Check ``--only`` against ``known()``, then print each row as it is made (or read from the
    cache) and the summary; with ``--json``, the matrix as JSON only."""
    names = args.only or None
    if names is not None:
        unknown = sorted(set(names) - set(known()))
        if unknown:
            raise CliError(
                f"{command.unknown}: {', '.join(unknown)}{command.hint}; run `mlx-harness models "
                f"{command.name}` without --only to list them"
            )
    progress = None if args.json else (lambda row: print(line(row, command), flush=True))
    m = matrix(force=args.force, names=names, on_row=progress)
    if args.json:
        print(json.dumps(m.to_json(), indent=2))
        return 0
    if m.cached:
        for row in m.rows:
            print(line(row, command))
    print(summary(m))
    return 0


def _cell_text(cell: Cell, detail_until: str | None) -> str:
    if cell.outcome is Outcome.OK and detail_until is not None:
        return visible(cell.detail.split(detail_until)[0], 28)
    return SHORT[cell.outcome]


def line(row: ArchRow, command: MatrixCommand) -> str:
    """One family on one line: generated, then each column."""
    cells = "  ".join(
        f"{c}={_cell_text(row.cell(c), command.details.get(c))}" for c in command.columns
    )
    return f"{visible(row.name):<{command.width}} generated={SHORT[row.generated.outcome]}  {cells}"


def provenance(m: RowsMatrix) -> str:
    """The installed versions the matrix is of, and whether it was run or read from the cache."""
    versions = ", ".join(f"{p} {v}" for p, v in m.versions.items())
    return f"{versions}; {'cached' if m.cached else 'run'}"


def render_summary(
    m: RowsMatrix, command: MatrixCommand, headline: str, tail: Sequence[str] = ()
) -> str:
    """``headline``, counts per column, then every failure and every family not generated, by
    reason; then ``tail``."""
    lines = ["", headline]
    for column, counter in m.counts().items():
        shown = ", ".join(f"{o.value} {counter[o]}" for o in Outcome if counter[o])
        lines.append(f"  {column:<10} {shown}")
    by_reason: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in m.rows:
        if row.generated.outcome is not Outcome.OK:
            by_reason[("not generated", row.generated.detail)].append(row.name)
            continue
        for column in command.columns:
            cell = row.cell(column)
            if cell.outcome is Outcome.FAILED:
                by_reason[(f"{column} failed", cell.detail)].append(row.name)
    if by_reason:
        lines.append("")
    for (what, reason), names in sorted(by_reason.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        lines.append(f"{what}: {visible(reason, 160)}  [{', '.join(visible(n) for n in names)}]")
    lines.extend(tail)
    return "\n".join(lines)


def add_command(
    models: argparse._SubParsersAction[argparse.ArgumentParser],
    command: MatrixCommand,
    func: Callable[[argparse.Namespace], int],
    aliases: Sequence[str] = (),
) -> argparse.ArgumentParser:
    """Add ``command`` to the ``models`` subcommands (also under ``aliases``), run by ``func``;
    returns its parser."""
    p = models.add_parser(command.name, help=command.help, aliases=list(aliases))
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--force", action="store_true", help="run again even if a result is cached")
    p.add_argument("--only", nargs="+", metavar=command.metavar, help="try only these (not cached)")
    p.set_defaults(func=func)
    return p
