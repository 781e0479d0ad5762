"""``mlx-harness models audio-sweep`` (alias ``audio-matrix``), a family sweep: every tts/stt family
of the installed mlx-audio, tried tiny (generated, load, run)."""

from __future__ import annotations

import argparse

from harness.cli.family_matrix import MatrixCommand, add_command, provenance, run_matrix
from harness.cli.family_matrix import render_summary as family_summary
from harness.families.audio import COLUMNS
from harness.families.audio_matrix import AudioMatrix, matrix
from harness.models.zoo.derive_audio import family_names

COMMAND = MatrixCommand(
    "audio-sweep",
    help="every tts/stt family of the installed mlx-audio, generated tiny: load, run "
    "(cached per mlx-audio/mlx version)",
    columns=COLUMNS,
    width=32,
    unknown="not a tts/stt family of the installed mlx-audio",
    hint=" (names are tts/<model_type> or stt/<model_type>)",
    metavar="KIND/TYPE",
)


def run(args: argparse.Namespace) -> int:
    return run_matrix(args, COMMAND, known=family_names, matrix=matrix, summary=render_summary)


def render_summary(m: AudioMatrix) -> str:
    """Counts per column, then every failure and every family not generated, by reason."""
    made = f"{provenance(m)}, made in {m.wall_s:.0f} s"
    return family_summary(m, COMMAND, f"{len(m.rows)} audio families ({made})")


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Add ``audio-sweep`` (alias ``audio-matrix``) to the ``models`` subcommands."""
    return add_command(subparsers, COMMAND, run, aliases=("audio-matrix",))
