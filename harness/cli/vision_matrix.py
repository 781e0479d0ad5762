"""``mlx-harness models vision-sweep`` (aliases ``vision-matrix``, ``vlm-matrix``), a family sweep:
every model package of the installed mlx-vlm, tried tiny."""

from __future__ import annotations

import argparse
from types import MappingProxyType

from harness.cli.family_matrix import MatrixCommand, add_command, provenance, run_matrix
from harness.cli.family_matrix import render_summary as family_summary
from harness.families.vision import COLUMNS
from harness.families.vision_matrix import VisionMatrix, matrix
from harness.models.zoo.derive_vision_family import vision_model_types

COMMAND = MatrixCommand(
    "vision-sweep",
    help="every model package of the installed mlx-vlm, generated tiny: load, text, image, "
    "cache, tool parser (cached per mlx-vlm/transformers/mlx version)",
    columns=COLUMNS,
    width=28,
    unknown="not a model package of the installed mlx-vlm",
    details=MappingProxyType({"cache": ";", "tool": ";"}),
)


def run(args: argparse.Namespace) -> int:
    return run_matrix(
        args, COMMAND, known=vision_model_types, matrix=matrix, summary=render_summary
    )


def render_summary(m: VisionMatrix) -> str:
    """Counts per column, then every failure and every family not generated, by reason."""
    made = f"{provenance(m)}, {m.wall_s:.0f} s"
    return family_summary(m, COMMAND, f"{len(m.rows)} mlx-vlm model packages ({made})")


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Add ``vision-sweep`` (aliases ``vision-matrix``, ``vlm-matrix``) to the ``models``
    subcommands."""
    return add_command(subparsers, COMMAND, run, aliases=("vision-matrix", "vlm-matrix"))
