"""``mlx-harness models arch-matrix``: every architecture of the installed mlx-lm, tried tiny."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

from harness.cli_errors import CliError
from harness.models.zoo.arch_matrix import Matrix, matrix, to_json
from harness.models.zoo.arch_trial import COLUMNS, ArchRow, Cell, Outcome
from harness.report.escape import visible

SHORT = {
    Outcome.OK: "ok",
    Outcome.ABSENT: "no",
    Outcome.FAILED: "FAIL",
    Outcome.NOT_GENERATED: "-",
    Outcome.NOT_RUN: ".",
}


def cmd_arch_matrix(args: argparse.Namespace) -> int:
    names = args.only or None
    if names is not None:
        from harness.models.zoo.derive_text import architecture_names

        unknown = sorted(set(names) - set(architecture_names()))
        if unknown:
            raise CliError(
                f"not an architecture of the installed mlx-lm: {', '.join(unknown)}; "
                "run `mlx-harness models arch-matrix` without --only to list them"
            )
    progress = None if args.json else (lambda row: print(_line(row), flush=True))
    m = matrix(force=args.force, names=names, on_row=progress)
    if args.json:
        print(json.dumps(to_json(m), indent=2))
        return 0
    if m.cached:
        for row in m.rows:
            print(_line(row))
    print(render_summary(m))
    return 0


def _cell_text(column: str, cell: Cell) -> str:
    if cell.outcome is Outcome.OK and column in ("cache", "tools"):
        return visible(cell.detail.split(" (")[0], 28)
    return SHORT[cell.outcome]


def _line(row: ArchRow) -> str:
    cells = "  ".join(f"{c}={_cell_text(c, row.cell(c))}" for c in COLUMNS)
    generated = SHORT[row.generated.outcome] if row.generated.outcome is not Outcome.OK else "ok"
    return f"{visible(row.name):<22} generated={generated}  {cells}"


def render_summary(m: Matrix) -> str:
    """Counts per column, then every failure and every architecture not generated, by reason."""
    versions = ", ".join(f"{p} {v}" for p, v in m.versions.items())
    source = "cached" if m.cached else "run"
    lines = [
        "",
        f"{len(m.rows)} architecture modules ({versions}; {source}, made in {m.wall_s:.0f} s); "
        f"{len(m.not_architectures)} helper modules are no architecture",
    ]
    counts = m.counts()
    for column, counter in counts.items():
        shown = ", ".join(f"{o.value} {counter[o]}" for o in Outcome if counter[o])
        lines.append(f"  {column:<10} {shown}")
    by_reason: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in m.rows:
        if row.generated.outcome is not Outcome.OK:
            by_reason[("not generated", row.generated.detail)].append(row.name)
            continue
        for column in COLUMNS:
            cell = row.cell(column)
            if cell.outcome is Outcome.FAILED:
                by_reason[(f"{column} failed", cell.detail)].append(row.name)
    if by_reason:
        lines.append("")
    for (what, reason), names in sorted(by_reason.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        lines.append(f"{what}: {visible(reason, 160)}  [{', '.join(visible(n) for n in names)}]")
    lines.append("")
    for name, why in m.not_architectures.items():
        lines.append(f"not an architecture: {name} ({why})")
    return "\n".join(lines)


def add_parser(models: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``arch-matrix`` to the ``models`` subcommands."""
    p = models.add_parser(
        "arch-matrix",
        help="every architecture of the installed mlx-lm, generated tiny: load, generate, cache, "
        "trim, tool template (cached per mlx-lm/mlx version)",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--force", action="store_true", help="run again even if a result is cached")
    p.add_argument("--only", nargs="+", metavar="MODULE", help="try only these (not cached)")
    p.set_defaults(func=cmd_arch_matrix)
