"""``mlx-harness pin-compare RUN_DIR... [--out DIR] [--metric NAME]`` (was ``pin-matrix``), a
pin-set comparison: one report over the runs of several pin sets (models x scenarios x pin
sets), oldest first, with the change between adjacent pin sets judged by the rules of ``compare``.

``mlx-harness run SUITE --pin-set all`` writes it by itself when it runs two pin sets or more.
Exit status: 0 when written, 1 with ``--fail-on-regression`` when a transition regressed or
newly fails (a case, or a named check of one), 2 when the runs cannot form a pin-set comparison
(one line).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.cli.errors import CliError

DEFAULT_ROOT = Path("reports")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``pin-compare`` subcommand (aliases ``pin-matrix`` and ``matrix``, its earlier
    names) to an ``add_subparsers()`` object; returns its parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "pin-compare",
        aliases=["pin-matrix", "matrix"],
        help="a pin-set comparison: one report over the runs of several pin sets, each change "
        "between adjacent pin sets judged",
    )
    p.add_argument(
        "runs",
        nargs="+",
        metavar="RUN_DIR",
        help="run folders or run.jsonl files, one per pin set, oldest first",
    )
    p.add_argument(
        "--out", default=None, help="folder for matrix.md and matrix.html (default: reports/...)"
    )
    p.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="NAME",
        help="a metric each cell shows (repeat it); default: each scenario's first two",
    )
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a transition regressed or newly fails (a case or a named check)",
    )
    p.set_defaults(func=run)
    return p


def write_matrix(
    run_dirs: Sequence[Path], out: Path, metrics: Sequence[str] = ()
) -> tuple[Path, tuple[str, ...], bool]:
    """Build and render the matrix of ``run_dirs`` into ``out``: (html path, summary lines,
    whether a transition regressed or newly fails, a case or a named check)."""
    from harness.core.types import Verdict
    from harness.report.pin_matrix import render_pin_matrix
    from harness.results.pin_matrix import PinMatrixError, build_pin_matrix
    from harness.results.store import load_run

    runs = [load_run(path) for path in run_dirs]
    try:
        matrix = build_pin_matrix(runs, metrics=metrics)
    except PinMatrixError as exc:
        raise CliError(str(exc)) from None
    paths = render_pin_matrix(matrix, out)
    from harness.report.pin_matrix import build_view

    bad = any(
        t.verdicts.get(Verdict.REGRESSED, 0)
        or t.verdicts.get(Verdict.NEWLY_FAILING, 0)
        or t.check_verdicts.get(Verdict.NEWLY_FAILING, 0)
        for t in matrix.transitions
    )
    return paths.html, build_view(matrix).summary, bad


def run(args: argparse.Namespace) -> int:
    from harness.report.escape import plain
    from harness.results.report_dir import shown
    from harness.runner.active_run import new_run_id

    out = Path(args.out) if args.out else DEFAULT_ROOT / f"matrix-{new_run_id()}"
    html, summary, bad = write_matrix([Path(r) for r in args.runs], out, args.metric)
    for line in summary:
        print(plain(line, 1000))
    print(f"pin-set comparison: {shown(html)}")
    return 1 if bad and args.fail_on_regression else 0
