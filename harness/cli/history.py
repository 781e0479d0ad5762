"""``mlx-harness history DIR... --metric NAME``: a metric over runs, with step changes
attributed; without ``--metric``, the metrics the runs hold (name, unit, runs, cases)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from harness.cli.errors import CliError


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "history", help="a metric over runs, with step changes attributed"
    )
    p.add_argument("paths", nargs="+", help="directories holding run records")
    p.add_argument(
        "--metric",
        default=None,
        help="metric name, e.g. throughput.decode_tps (without it: list the runs' metrics)",
    )
    p.add_argument("--case", default=None, help="only cases whose id contains this text")
    add_fit_options(p)
    p.set_defaults(func=run)
    return p


def add_fit_options(p: argparse.ArgumentParser) -> None:
    """How steps are fitted, for ``history`` and ``site`` alike."""
    p.add_argument(
        "--min-effect",
        type=float,
        default=0.05,
        help="smallest relative step that counts as a change (0.05: 5%%)",
    )
    p.add_argument(
        "--allow-dirty-machine",
        action="store_true",
        help="fit the runs measured on a busy, throttled or swapping machine too (they are "
        "still marked)",
    )


def run(args: argparse.Namespace) -> int:
    from harness.drive.exit_rules import allow_dirty_machine
    from harness.report.formatting import NO_CLEAN_RUN, figure
    from harness.results.history import Collector, read_digests

    paths = [Path(p) for p in args.paths]
    fit_dirty = allow_dirty_machine(args.allow_dirty_machine)
    collector = Collector(args.metric, args.case, fit_dirty=fit_dirty)
    keep = (lambda _: True) if args.metric is None else (lambda name: name == args.metric)
    for digest in read_digests(paths, keep):  # one run at a time, reduced as it is read
        collector.add(digest)
    if args.metric is None:
        return _list_metrics(collector, args.paths)
    found = 0
    for s in collector.series(args.min_effect):
        found += 1
        model = f" · {s.identity}" if s.identity else ""
        print(f"{s.case_id} · {s.metric} · {s.machine}{model}")
        for change in s.changed_from_before:
            print(f"  a new series: {change}")
        steps = {step.index: step for step in s.steps}
        for i, (point, level) in enumerate(zip(s.points, s.levels, strict=True)):
            mark = ""
            if i in steps:
                step = steps[i]
                mark = f"  <- step {step.change:+.1%}: {'; '.join(step.causes)}"
            if point.dirty:
                fitted = "fitted anyway" if fit_dirty else "not fitted"
                mark += f"  (flagged, {fitted}: {'; '.join(point.dirty)})"
            fit = f"level {figure(level)}" if math.isfinite(level) else NO_CLEAN_RUN
            value = figure(point.median)
            print(f"  {point.started_at}  {point.run_id:<24} {value:>12}  {fit}{mark}")
        if all(p.dirty for p in s.points) and not fit_dirty:
            print(f"  {NO_CLEAN_RUN}: all {len(s.points)} runs flagged, so no step can be found")
        else:
            print(f"  {len(s.steps)} step(s) over {len(s.points)} runs")
    if not found:
        raise CliError(f"no run under {', '.join(args.paths)} has metric '{args.metric}'")
    return 0


def _list_metrics(collector: Any, paths: list[str]) -> int:
    """Every metric the runs hold, with its unit and in how many runs and cases it appears."""
    seen = collector.metrics()
    if not seen:
        raise CliError(f"no run under {', '.join(paths)} holds a metric; check the paths")
    print(f"{len(seen)} metrics in {collector.runs} runs; follow one with --metric NAME")
    width = max(len(name) for name, *_ in seen)
    for name, unit, in_runs, in_cases in seen:
        print(f"  {name:<{width}}  {unit:<7} {in_runs:>4} runs {in_cases:>5} cases")
    return 0
