"""``mlx-harness models audio-matrix``: every tts/stt family of the installed mlx-audio, tried
tiny (generated, load, run)."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

from harness.cli_errors import CliError
from harness.models.zoo.arch_trial import ArchRow, Outcome
from harness.models.zoo.audio_matrix import AudioMatrix, matrix, to_json
from harness.models.zoo.audio_trial import COLUMNS
from harness.report.escape import visible

SHORT = {
    Outcome.OK: "ok",
    Outcome.ABSENT: "no",
    Outcome.FAILED: "FAIL",
    Outcome.NOT_GENERATED: "-",
    Outcome.NOT_RUN: ".",
}


def cmd_audio_matrix(args: argparse.Namespace) -> int:
    names = args.only or None
    if names is not None:
        from harness.models.zoo.derive_audio import family_names

        unknown = sorted(set(names) - set(family_names()))
        if unknown:
            raise CliError(
                f"not a tts/stt family of the installed mlx-audio: {', '.join(unknown)} "
                "(names are tts/<model_type> or stt/<model_type>); run `mlx-harness models "
                "audio-matrix` without --only to list them"
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


def line(row: ArchRow) -> str:
    cells = "  ".join(f"{c}={SHORT[row.cell(c).outcome]}" for c in COLUMNS)
    generated = SHORT[row.generated.outcome]
    return f"{visible(row.name):<32} generated={generated}  {cells}"


def render_summary(m: AudioMatrix) -> str:
    """Counts per column, then every failure and every family not generated, by reason."""
    versions = ", ".join(f"{p} {v}" for p, v in m.versions.items())
    source = "cached" if m.cached else "run"
    lines = ["", f"{len(m.rows)} audio families ({versions}; {source}, made in {m.wall_s:.0f} s)"]
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
    """Add ``audio-matrix`` to the ``models`` subcommands."""
    p = models.add_parser(
        "audio-matrix",
        help="every tts/stt family of the installed mlx-audio, generated tiny: load, run "
        "(cached per mlx-audio/mlx version)",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--force", action="store_true", help="run again even if a result is cached")
    p.add_argument("--only", nargs="+", metavar="KIND/TYPE", help="try only these (not cached)")
    p.set_defaults(func=cmd_audio_matrix)
