"""``mlx-harness compare BASELINE CURRENT``: the verdict counts and the worst changes on the
terminal; with ``--out``, compare.md / compare.html and every comparison in changes.csv;
exit 1 on regressions."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.cli.errors import CliError


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a level between 0 and 1, e.g. 0.05")
    return value


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a count of lines, e.g. 10")
    return int(text)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "compare", help="compare two runs; exit 1 on regressions"
    )
    p.add_argument("baseline", help="baseline run directory or run.jsonl")
    p.add_argument("current", help="current run directory or run.jsonl")
    p.add_argument(
        "--out",
        help="write compare.md, compare.html and changes.csv (every comparison) here",
    )
    p.add_argument(
        "--show",
        type=_count,
        default=10,
        metavar="N",
        help="changed cases listed on the terminal, worst first (0: counts only)",
    )
    p.add_argument("--alpha", type=_alpha, default=0.05, help="significance level (0-1)")
    p.add_argument(
        "--min-effect",
        type=float,
        default=0.03,
        help="smallest relative change that counts (metrics may require more)",
    )
    p.add_argument(
        "--allow-machine-change",
        action="store_true",
        help="compare timings even though the machine changed",
    )
    p.add_argument(
        "--allow-dirty-machine",
        action="store_true",
        help="compare cases even where either run was measured on a busy, throttled or "
        "swapping machine",
    )
    p.add_argument(
        "--allow-model-change",
        action="store_true",
        help="compare even though model files changed (e.g. a 4-bit variant)",
    )
    p.add_argument(
        "--fail-on",
        default=None,
        metavar="KINDS",
        help="what makes the exit status 1, as for run (regression always counts here)",
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from harness.core.gc_pause import collector_paused
    from harness.drive.exit_rules import ExitRules, allow_dirty_machine, exit_lines
    from harness.report import render_both
    from harness.report.change_list import changes_csv
    from harness.report.comparison import section
    from harness.report.comparison_text import comparison_lines
    from harness.results.compare import Thresholds, compare_runs
    from harness.results.fail_on import FailOnError, parse_fail_on
    from harness.results.store import load_run

    try:  # compare's job is regressions: they always count
        rules = ExitRules(args.fail_on, True, Thresholds())
        parse_fail_on(args.fail_on, regression=True)
    except FailOnError as exc:
        raise CliError(str(exc)) from None
    with collector_paused():  # millions of objects, no cycles (see harness/core/gc_pause.py)
        baseline, current = load_run(Path(args.baseline)), load_run(Path(args.current))
        comparison = compare_runs(
            baseline,
            current,
            thresholds=Thresholds(
                alpha=args.alpha,
                min_effect=args.min_effect,
                allow_machine_change=args.allow_machine_change,
                allow_model_change=args.allow_model_change,
                allow_dirty_machine=allow_dirty_machine(args.allow_dirty_machine),
            ),
        )
        shown = args.show
        if args.out:  # the full lists go to files; the terminal gets counts and the worst changes
            out = Path(args.out)
            sections = [section(comparison, "changes.csv (beside this file)")]
            out.mkdir(parents=True, exist_ok=True)
            markdown, html = render_both(current, sections, whole_in="compare.html")
            (out / "compare.md").write_text(markdown)
            (out / "compare.html").write_text(html)
            (out / "changes.csv").write_text(changes_csv(comparison))
            listed = f"every one in {out / 'changes.csv'}"
            print(f"wrote {out / 'compare.md'}, compare.html and changes.csv", file=sys.stderr)
            print("\n".join(comparison_lines(comparison, shown, listed)))
        else:
            print("\n".join(comparison_lines(comparison, shown)))
    judged = exit_lines(current, comparison, rules, shard=current.shard is not None)
    for line in judged:
        print(line, file=sys.stderr)
    return 1 if judged else 0
