"""``mlx-harness bisect --package P --good V1 --bad V2 SUITE -k CASE --metric M``: the first
released version of P between V1 and V2 whose case is significantly worse on M than at V1
(or stops running ok), each version run in its own pin-set environment, side by side with V1
(the two runs take turns, a round at a time: :mod:`harness.cli.pin_turns`). ``--check
[SCENARIO:]NAME`` instead of ``--metric`` follows one named check of the case: the first
version where its verdict differs from V1's (``concurrent``: pass -> fail), whatever the case's
status.

Prints one line per step and the answer with its evidence (medians, n, p). Exit status: 0 when a
first bad version was named, 1 when not (the bad endpoint was not worse, or a step stayed
inconclusive), 2 on bad input (one line).
"""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import Any

from harness.cli.errors import CliError
from harness.cli.suite_paths import suite_paths


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from harness.cli.pin_sets import add_env_options

    p: argparse.ArgumentParser = subparsers.add_parser(
        "bisect", help="find the first release of a package that made a case worse"
    )
    p.add_argument("paths", nargs="+", metavar="SUITE", help="suite files or directories")
    p.add_argument("--package", required=True, help="the package to bisect, e.g. mlx-lm")
    p.add_argument("--good", required=True, metavar="VERSION", help="a version known good")
    p.add_argument("--bad", required=True, metavar="VERSION", help="a later version known bad")
    p.add_argument("-k", required=True, help="the one case to run (text of its id)")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--metric", help="e.g. throughput.decode_tps")
    target.add_argument(
        "--check",
        metavar="[SCENARIO:]NAME",
        help="a named check of the case to follow instead, e.g. api_contracts:concurrent: the "
        "first release where its verdict differs from the good one's",
    )
    p.add_argument("--pin", action="append", default=[], help="another exact pin every step keeps")
    p.add_argument(
        "--max-rounds",
        type=int,
        default=3,
        help="runs of a version (and of the good one) before a step is called inconclusive",
    )
    p.add_argument(
        "--report-dir", default="reports/bisect", help="where the step runs and their reports go"
    )
    add_env_options(p)
    p.set_defaults(func=run)
    return p


def _version(text: str, flag: str) -> Any:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text)
    except InvalidVersion:
        raise CliError(f"{flag} {text!r}: not a version; e.g. {flag} 0.31.3") from None


def _metric_spec(name: str) -> Any:
    from harness.scenarios.specs import all_specs

    specs = all_specs()
    spec = specs.get(name)
    if spec is None:
        close = difflib.get_close_matches(name, list(specs), n=1)
        hint = f"did you mean '{close[0]}'?" if close else "see the metrics in docs/scenarios.md"
        raise CliError(f"--metric {name}: no such metric; {hint}")
    return spec


def _check_name(text: str) -> None:
    """``--check`` as ``NAME`` or ``SCENARIO:NAME``; an ``api_contracts`` check is known
    before anything runs (other scenarios' names are checked against the first run)."""
    from harness.results.bisect import split_check

    scenario, name = split_check(text)
    if not name:
        raise CliError(f"--check {text!r}: give a check's name, e.g. api_contracts:concurrent")
    if scenario != "api_contracts":
        return
    from harness.scenarios.api_contracts.catalog import CHECK_NAMES

    if name not in CHECK_NAMES:
        close = difflib.get_close_matches(name, CHECK_NAMES, n=1)
        hint = f"did you mean '{close[0]}'?" if close else "known: " + ", ".join(CHECK_NAMES)
        raise CliError(f"--check {text}: api_contracts has no check '{name}'; {hint}")


def run(args: argparse.Namespace) -> int:
    from harness.cli.pin_sets import env_spec, pin_set_command, prepare
    from harness.cli.pin_turns import run_taking_turns
    from harness.results.bisect import (
        BisectError,
        Measurement,
        bisect,
        evidence_lines,
        measurement_of,
    )
    from harness.results.compare import Thresholds
    from harness.results.store import RunFileError, load_run
    from harness.runner.active_run import new_run_id
    from harness.runner.package_index import PackageIndexError, available_versions, between
    from harness.runner.pin_resolve import with_backend
    from harness.spec.pin_sets import exact_pin

    paths = suite_paths(args.paths)
    good, bad = _version(args.good, "--good"), _version(args.bad, "--bad")
    if not good < bad:
        raise CliError(f"--good {good} is not before --bad {bad}; swap them")
    if args.max_rounds < 1:
        raise CliError("--max-rounds must be 1 or more")
    for pin in args.pin:
        try:
            exact_pin(pin)
        except ValueError as exc:
            raise CliError(f"--pin: {exc}") from None
    spec = None if args.check else _metric_spec(args.metric)
    if args.check is not None:
        _check_name(args.check)
    try:
        versions = available_versions(
            args.package, index_url=args.index_url, find_links=args.find_links
        )
    except PackageIndexError as exc:
        raise CliError(str(exc)) from None
    for end, flag in ((good, "--good"), (bad, "--bad")):
        if end not in versions:
            shown = ", ".join(map(str, versions[-8:])) or "none"
            raise CliError(f"{flag} {end}: not a release of {args.package} (latest: {shown})")
    path = [str(v) for v in between(versions, good, bad)]
    print(f"bisect {args.package}: {len(path)} releases from {good} to {bad}", flush=True)
    root = Path(args.report_dir) / new_run_id()
    rounds: dict[str, int] = {}

    def measure(good_version: str, version: str) -> tuple[Measurement, Measurement]:
        """Both sides of a step in one run each, taking turns (side by side)."""
        rounds[version] = rounds.get(version, 0) + 1
        step_id = f"{version}-r{rounds[version]}"
        sides = [(f"{good_version}-vs-{step_id}", good_version), (step_id, version)]
        runs = []
        for run_id, side in sides:
            pins = (f"{args.package}=={side}", *args.pin)
            env = prepare(with_backend(env_spec(args, f"{args.package}-{side}", pins)))
            child = ["run", *map(str, paths), "-k", args.k, "--report-dir", str(root)]
            runs.append(
                (env, pin_set_command(env, [*child, "--run-id", run_id], [s for _, s in sides]))
            )
        log = root / "logs" / f"{step_id}.log"
        run_taking_turns(runs, log)
        found = []
        for run_id, side in sides:
            try:
                record = load_run(root / run_id)
            except RunFileError as exc:
                raise CliError(f"{side}: the run left no record ({exc}); see {log}") from None
            found.append(measurement_of(record, args.metric, side, check=args.check))
        return found[0], found[1]

    def show(step: Any) -> None:
        print(f"  {step.verdict.value:>12} {step.version} ({step.rounds} round(s))", flush=True)

    try:
        result = bisect(
            path,
            measure,
            spec=spec,
            thresholds=Thresholds(),
            max_rounds=args.max_rounds,
            on_step=show,
            check=args.check,
        )
    except BisectError as exc:
        raise CliError(str(exc)) from None
    print("\n".join(evidence_lines(result, args.metric)))
    print(f"runs and logs: {root}")
    return 0 if result.first_bad else 1
