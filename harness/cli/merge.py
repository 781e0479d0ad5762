"""``mlx-harness merge RUN_DIR... [--out DIR] [--run-id ID]``: join runs (the shards of a plan,
run by several CI jobs) into one record and one report.

The merged run lands in ``--out`` (default ``reports/<run-id>``, and ``reports/latest`` then
points at it). Exit status: 0 when every case is ok, 1 when one is not or the merged run is
incomplete (a shard missing, a run unfinished), 2 when the runs cannot be merged (one line).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.cli.errors import CliError

DEFAULT_ROOT = Path("reports")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``merge`` subcommand to an ``add_subparsers()`` object; returns its parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "merge", help="join run records (e.g. the shards of --shard I/N) into one report"
    )
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run folders or run.jsonl files")
    p.add_argument(
        "--out", default=None, help="folder for the merged run (default: reports/<run-id>)"
    )
    p.add_argument(
        "--run-id", default=None, help="the merged run's id (default: --out's name, or new)"
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from harness.report import terminal_summary
    from harness.report.escape import plain
    from harness.report.publish import LATEST, publish_reports
    from harness.results.merge import (
        MergeError,
        Source,
        merge_notes,
        merge_runs,
        missing_shards,
    )
    from harness.results.report_dir import shown
    from harness.results.store import RUN_FILE, load_run, write_record
    from harness.runner.active_run import new_run_id

    sources = [Source(shown(raw), load_run(Path(raw))) for raw in args.runs]
    out = Path(args.out) if args.out else None
    run_id = str(args.run_id or (out.name if out is not None else f"merged-{new_run_id()}"))
    run_dir = out if out is not None else DEFAULT_ROOT / run_id
    if (run_dir / RUN_FILE).exists():
        raise CliError(
            f"{shown(run_dir)}: already holds a run record; choose another --out or --run-id"
        )
    try:
        merged = merge_runs(sources, run_id)
    except MergeError as exc:
        raise CliError(str(exc)) from None
    record = write_record(merged, run_dir)
    print("\n".join(terminal_summary(record)))
    for note in merge_notes(record):
        print(plain(note, 1000))
    html = publish_reports(record, run_dir, None if out is not None else run_dir.parent / LATEST)
    print(f"report: {html}")
    incomplete = record.finished_at is None or bool(missing_shards(record.parts))
    return 1 if incomplete or not all(r.status.is_ok for r in record.results) else 0
