"""``mlx-harness history DIR... --metric NAME``: a metric over runs, with step changes
attributed; without ``--metric``, the metrics the runs hold (name, unit, runs, cases)."""

from __future__ import annotations

import argparse
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
    p.add_argument(
        "--min-effect",
        type=float,
        default=0.05,
        help="smallest relative step that counts as a change (0.05: 5%%)",
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from harness.results.history import find_runs, series

    runs = find_runs(Path(p) for p in args.paths)
    if args.metric is None:
        return _list_metrics(runs, args.paths)
    found = series(runs, args.metric, case_filter=args.case, min_effect=args.min_effect)
    if not found:
        raise CliError(f"no run under {', '.join(args.paths)} has metric '{args.metric}'")
    for s in found:
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
            print(
                f"  {point.started_at}  {point.run_id:<24} {point.median:12.4g}"
                f"  level {level:.4g}{mark}"
            )
        print(f"  {len(s.steps)} step(s) over {len(s.points)} runs")
    return 0


def _list_metrics(runs: list[Any], paths: list[str]) -> int:
    """Every metric the runs hold, with its unit and in how many runs and cases it appears."""
    seen: dict[str, tuple[str, set[int], set[str]]] = {}
    for index, record in enumerate(runs):  # runs may share an id (a nightly's fixed --run-id)
        for result in record.results:
            for m in result.metrics:
                unit, in_runs, in_cases = seen.setdefault(m.name, (m.unit.value, set(), set()))
                in_runs.add(index)
                in_cases.add(result.case_id)
    if not seen:
        raise CliError(f"no run under {', '.join(paths)} holds a metric; check the paths")
    print(f"{len(seen)} metrics in {len(runs)} runs; follow one with --metric NAME")
    width = max(len(name) for name in seen)
    for name, (unit, in_runs, in_cases) in sorted(seen.items()):
        print(f"  {name:<{width}}  {unit:<7} {len(in_runs):>4} runs {len(in_cases):>5} cases")
    return 0
