"""``mlx-harness models arch-sweep`` (alias ``arch-matrix``), a family sweep: every architecture
of the installed mlx-lm, tried tiny."""

from __future__ import annotations

import argparse
from types import MappingProxyType

from harness.cli.family_matrix import MatrixCommand, add_command, provenance, run_matrix
from harness.cli.family_matrix import render_summary as family_summary
from harness.families.text import COLUMNS
from harness.families.text_matrix import Matrix, matrix
from harness.models.zoo.derive_text import architecture_names

COMMAND = MatrixCommand(
    "arch-sweep",
    help="every architecture of the installed mlx-lm, generated tiny: load, generate, cache, "
    "trim, tool template (cached per mlx-lm/mlx version)",
    columns=COLUMNS,
    width=22,
    unknown="not an architecture of the installed mlx-lm",
    details=MappingProxyType({"cache": " (", "tools": " ("}),
)


def run(args: argparse.Namespace) -> int:
    return run_matrix(
        args, COMMAND, known=architecture_names, matrix=matrix, summary=render_summary
    )


def render_summary(m: Matrix) -> str:
    """Counts per column, then every failure and every architecture not generated, by reason;
    then the helper modules that are no architecture."""
    headline = (
        f"{len(m.rows)} architecture modules ({provenance(m)}, made in {m.wall_s:.0f} s); "
        f"{len(m.not_architectures)} helper modules are no architecture"
    )
    tail = [f"not an architecture: {name} ({why})" for name, why in m.not_architectures.items()]
    return family_summary(m, COMMAND, headline, ["", *tail])


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Add ``arch-sweep`` (alias ``arch-matrix``) to the ``models`` subcommands."""
    return add_command(subparsers, COMMAND, run, aliases=("arch-matrix",))
