"""``mlx-harness validate SUITE... [--expand]``: check suites without running them: the
schema, and the models' files (what a run would skip for its input is an error here). Exit 0:
every suite ok; 2: bad input, one line per problem."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from harness.cli.suite_paths import suite_paths


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "validate", help="check suites without running them"
    )
    p.add_argument("paths", nargs="+", help="suite files or directories")
    p.add_argument(
        "--expand",
        action="store_true",
        help="list every model each select: entry chose or left out (and why)",
    )
    p.add_argument(
        "--schema-only",
        action="store_true",
        help="check the suites' text only, not the models' files (a machine without the models)",
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    import datetime as dt

    from harness.cli.model_files import model_problems
    from harness.spec.errors import SuiteInvalid
    from harness.spec.ledger import overdue_warnings
    from harness.spec.loader import load_suite
    from harness.spec.plan import plan
    from harness.spec.selection_text import detail_lines, summary_line

    failed = 0
    today = dt.date.today()
    for path in suite_paths(args.paths):
        try:
            loaded = load_suite(path)
        except SuiteInvalid as exc:
            failed += 1
            for error in exc.errors:
                print(error, file=sys.stderr)
            continue
        cases = plan(loaded)
        problems = [] if args.schema_only else model_problems(loaded, cases)
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            failed += 1
            continue
        print(f"{path}: ok ({len(loaded.models)} models, {len(cases)} cases)")
        for selection in loaded.selections:
            lines = detail_lines(selection) if args.expand else [summary_line(selection)]
            print("\n".join(f"  {line}" for line in lines))
        for warning in (*loaded.warnings, *overdue_warnings(loaded, today)):
            print(warning, file=sys.stderr)
    return 2 if failed else 0  # bad input, as run says it
