"""``mlx-harness report RUN [--baseline RUN]``: render a run's reports; exit as the exit rules
judges the run (and the comparison)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.cli.errors import CliError


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from harness.drive.exit_rules import add_exit_options

    p: argparse.ArgumentParser = subparsers.add_parser(
        "report", help="render report.md/report.html from a run record"
    )
    p.add_argument("run", help="run directory or run.jsonl")
    p.add_argument(
        "--baseline", default=None, help="a run to compare with: adds the comparison section"
    )
    add_exit_options(p.add_argument)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Render a run's reports; exit as the exit rules judge the run (and the comparison)."""
    from harness.drive.exit_rules import FailOnError, exit_lines, exit_rules_from, note_lines
    from harness.report.publish import publish_reports
    from harness.results.store import load_run

    try:
        rules = exit_rules_from(lambda dest: getattr(args, dest, None))
    except FailOnError as exc:
        raise CliError(str(exc)) from None
    path = Path(args.run)
    record = load_run(path)
    run_dir = path if path.is_dir() else path.parent
    sections = None
    comparison = None
    if args.baseline:
        from harness.report.comparison import with_comparison
        from harness.report.comparison_text import comparison_lines
        from harness.report.contents import scenarios_in
        from harness.results.compare import compare_runs
        from harness.results.store import RunFileError

        try:
            baseline = load_run(Path(args.baseline))
        except RunFileError as exc:
            raise CliError(f"--baseline: {exc}") from None
        comparison = compare_runs(baseline, record, thresholds=rules.thresholds)
        sections = with_comparison(comparison, scenarios=scenarios_in(record))
        print("\n".join(comparison_lines(comparison)))
    html = publish_reports(record, run_dir, None, sections)
    print(f"report: {html}")
    judged = exit_lines(record, comparison, rules, shard=record.shard is not None)
    for line in (*note_lines(record, comparison), *judged):
        print(line)
    failed = any(not r.status.is_ok for r in record.results)
    return 1 if judged or failed else 0
