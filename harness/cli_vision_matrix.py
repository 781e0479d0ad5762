"""``mlx-harness models vlm-matrix``: every model package of the installed mlx-vlm, tried tiny."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

from harness.cli_errors import CliError
from harness.models.zoo.arch_trial import ArchRow, Cell, Outcome
from harness.report.escape import visible
from harness.runner.vlm_matrix import VisionMatrix, matrix, to_json
from harness.runner.vlm_trial import COLUMNS

SHORT = {
    Outcome.OK: "ok",
    Outcome.ABSENT: "no",
    Outcome.FAILED: "FAIL",
    Outcome.NOT_GENERATED: "-",
    Outcome.NOT_RUN: ".",
}


def cmd_vlm_matrix(args: argparse.Namespace) -> int:
    names = args.only or None
    if names is not None:
        from harness.models.zoo.derive_vision_family import vision_model_types

        unknown = sorted(set(names) - set(vision_model_types()))
        if unknown:
            raise CliError(
                f"not a model package of the installed mlx-vlm: {', '.join(unknown)}; "
                "run `mlx-harness models vlm-matrix` without --only to list them"
            )
    progress = None if args.json else (lambda row: print(line(row), flush=True))
    m = matrix(force=args.force, names=names, on_row=progress)
    if args.json:
        print(json.dumps(to_json(m), indent=2))
        return 0
    if m.cached:
        for row in m.rows:
            print(line(row))
    print(render_summary(m))
    return 0


def _cell_text(column: str, cell: Cell) -> str:
    if cell.outcome is Outcome.OK and column in ("cache", "tool"):
        return visible(cell.detail.split(";")[0], 28)
    return SHORT[cell.outcome]


def line(row: ArchRow) -> str:
    """One family on one line: generated, then each column."""
    cells = "  ".join(f"{c}={_cell_text(c, row.cell(c))}" for c in COLUMNS)
    return f"{visible(row.name):<28} generated={SHORT[row.generated.outcome]}  {cells}"


def render_summary(m: VisionMatrix) -> str:
    """Counts per column, then every failure and every family not generated, by reason."""
    versions = ", ".join(f"{p} {v}" for p, v in m.versions.items())
    source = "cached" if m.cached else "run"
    lines = ["", f"{len(m.rows)} mlx-vlm model packages ({versions}; {source}, {m.wall_s:.0f} s)"]
    for column, counter in m.counts().items():
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
    return "\n".join(lines)


def add_parser(models: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``vlm-matrix`` to the ``models`` subcommands."""
    p = models.add_parser(
        "vlm-matrix",
        help="every model package of the installed mlx-vlm, generated tiny: load, text, image, "
        "cache, tool parser (cached per mlx-vlm/transformers/mlx version)",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--force", action="store_true", help="run again even if a result is cached")
    p.add_argument("--only", nargs="+", metavar="MODULE", help="try only these (not cached)")
    p.set_defaults(func=cmd_vlm_matrix)
