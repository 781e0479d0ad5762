"""``mlx-harness run``: plan suites, run every case in its model's worker, end the record,
publish the reports, print one line per case and the summary.

Stopping it (Ctrl-C, SIGTERM, SIGHUP) kills the workers, records the unfinished cases as
``interrupted``, writes a partial report and exits 128 + the signal; ``--resume RUN_ID`` then
runs only the cases without a final status and renders one report over the whole run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli.errors import CliError
from harness.cli.suite_paths import suite_paths

if TYPE_CHECKING:
    from harness.core.types import Case, CaseResult, RunRecord, Shard, SuiteInfo
    from harness.drive.exit_rules import ExitRules
    from harness.drive.run_end import RunEnd
    from harness.report.progress import RunProgress
    from harness.runner.active_run import ActiveRun
    from harness.runner.turns import Turns
    from harness.spec.loaded import LoadedSuite

NO_CASES = 5  # as pytest's "no tests collected"
BAD_INPUT = 2  # a suite that does not load: its lines say file, line and fix (pytest: 4)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from harness.cli.pin_sets import add_pin_set_options
    from harness.drive.run_options import add_run_options

    p: argparse.ArgumentParser = subparsers.add_parser("run", help="run suites without pytest")
    p.add_argument("paths", nargs="+", help="suite files or directories")
    p.add_argument(
        "--report-dir",
        default="reports",
        help="where runs go: REPORT_DIR/RUN_ID/ (run.jsonl, reports)",
    )
    p.add_argument(
        "--run-id", default=None, help="name of the run (default: time and a random tag)"
    )
    p.add_argument(
        "-k",
        default=None,
        metavar="EXPRESSION",
        help="only the cases pytest -k would choose: names (suite file, model, case, scenario, "
        "backend, tags) matched by substring, with and/or/not and parentheses",
    )
    p.add_argument(
        "--progress",
        choices=("auto", "live", "lines", "off"),
        default="auto",
        help="live: a display on the terminal; lines: a line per case and a 'still running' "
        "line every 20 s (CI logs); off: case lines only; auto: live on a terminal, else lines",
    )
    p.add_argument(
        "--still-running-every",
        type=float,
        default=20.0,
        metavar="SECONDS",
        help="with --progress lines: how often a long case prints 'still running'",
    )
    p.add_argument(
        "--allow-download", action="store_true", help="allow hub downloads (offline by default)"
    )
    add_run_options(p.add_argument)  # the options the pytest plugin shares
    p.add_argument(
        "--shard",
        metavar="I/N",
        default=None,
        help="run only shard I of N (split by model, the same on every machine); "
        "join the shards' runs with mlx-harness merge",
    )
    add_pin_set_options(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    return _run_suites(args, suite_paths(args.paths))


def _run_suites(args: argparse.Namespace, paths: Sequence[Path]) -> int:
    from harness.spec.errors import SuiteInvalid
    from harness.spec.ledger import overdue_warnings
    from harness.spec.loader import load_suite
    from harness.spec.plan import group_by_first_seen, plan, suite_info, worker_key
    from harness.spec.shard import ShardError, model_of, parse_shard, shard_line, shard_plan

    run_id = _run_id(args)
    try:
        split = parse_shard(args.shard) if args.shard is not None else None
    except ShardError as exc:
        raise CliError(str(exc)) from None
    chosen_exit_rules(args)  # a bad --fail-on is one line before anything runs
    if getattr(args, "pin_set", None):  # the suites are loaded whole in the pin sets' runs
        from harness.cli.pin_sets import run_pin_sets

        return run_pin_sets(args, paths)
    turns = _turns(args)  # a pin set's run taking turns: nothing costly before its first turn
    loaded: list[LoadedSuite] = []
    for path in paths:
        try:
            loaded.append(load_suite(path))
        except SuiteInvalid as exc:
            for error in exc.errors:
                print(error, file=sys.stderr)
            return BAD_INPUT
    planned = [(s, plan(s, allow_download=args.allow_download)) for s in loaded]
    today = dt.date.today()
    for suite, _ in planned:
        for warning in (*suite.warnings, *overdue_warnings(suite, today)):
            print(warning, file=sys.stderr)
    cases = [c for _, suite_cases in planned for c in suite_cases]
    if args.k:
        from harness.cli.keywords import chosen

        cases = chosen(cases, args.k)
    if not cases:
        print("no cases to run (see the warnings above, or -k)", file=sys.stderr)
        return NO_CASES
    shard = None
    if split is not None:  # an empty shard still runs: its record says it holds nothing
        shard, cases = shard_plan(cases, *split)
        print(shard_line(shard, len(cases), len({model_of(c) for c in cases})), flush=True)
    infos = [suite_info(s, suite_cases) for s, suite_cases in planned]
    return _run_cases(
        args,
        group_by_first_seen(cases, worker_key),
        infos,
        run_id,
        _load_baseline(args.baseline) or _suites_baseline(args, infos, run_id),
        shard,
        turns,
    )


def _turns(args: argparse.Namespace) -> Turns | None:
    """The turn a pin set's run takes with the others (the parent's hidden ``--turns``),
    held once this returns."""
    from harness.runner.signals import as_interrupt, stop_on_signals
    from harness.runner.turns import Turns, TurnsInvalid

    raw = getattr(args, "turns", None)
    if raw is None:
        return None
    try:
        turns = Turns.parse(raw)
    except TurnsInvalid as exc:
        raise CliError(str(exc)) from None
    with stop_on_signals():
        try:
            turns.acquire()
        except KeyboardInterrupt as exc:
            raise SystemExit(as_interrupt(exc).exit_status) from None
    return turns


def resume_command(args: argparse.Namespace, run_id: str) -> str:
    """The whole command that resumes this run: its suites, report folder and selection."""
    import shlex

    words = ["mlx-harness", "run", *map(str, args.paths)]
    words += ["--report-dir", str(args.report_dir)]
    if args.k:
        words += ["-k", args.k]
    if args.shard:
        words += ["--shard", args.shard]
    words += ["--resume", run_id]
    return shlex.join(words)


def chosen_exit_rules(args: argparse.Namespace) -> ExitRules:
    """The exit rules of ``run``'s options; a bad ``--fail-on`` is a CliError (one line)."""
    from harness.drive.exit_rules import FailOnError, exit_rules_from

    try:
        return exit_rules_from(lambda dest: getattr(args, dest, None))
    except FailOnError as exc:
        raise CliError(str(exc)) from None


def _run_id(args: argparse.Namespace) -> str | None:
    from harness.drive.run_options import different_runs

    error = different_runs(args.run_id, args.resume)
    if error is not None:
        raise CliError(error)
    chosen = args.resume or args.run_id
    return str(chosen) if chosen else None


def _load_baseline(raw: str | None) -> RunRecord | None:
    from harness.results.store import RunFileError, load_run

    if not raw:
        return None
    try:
        return load_run(Path(raw))
    except RunFileError as exc:
        raise CliError(f"--baseline: {exc}") from None


def _suites_baseline(
    args: argparse.Namespace, suites: Sequence[SuiteInfo], run_id: str | None
) -> RunRecord | None:
    """Without ``--baseline``: the run the suites name (``baseline:``), its line printed; a
    named run that is missing is a CliError (one line, nothing runs)."""
    from harness.results.named_baseline import NamedBaselineError, named_baseline

    if args.baseline:
        return None
    try:
        chosen = named_baseline(suites, Path(args.report_dir), run_id)
    except NamedBaselineError as exc:
        raise CliError(str(exc)) from None
    if chosen.line is not None:
        print(chosen.line, flush=True)
    return chosen.run


def _run_cases(
    args: argparse.Namespace,
    cases: list[Case],
    suites: list[SuiteInfo],
    run_id: str | None,
    baseline: RunRecord | None,
    shard: Shard | None = None,
    turns: Turns | None = None,
) -> int:
    from harness.cli.pin_sets import recorded_pin_set
    from harness.drive.exit_rules import allow_dirty_machine
    from harness.drive.run_end import conclude
    from harness.runner.active_run import ActiveRun
    from harness.runner.signals import as_interrupt, signals_deferred, stop_on_signals

    with stop_on_signals():
        try:
            active = ActiveRun(
                Path(args.report_dir),
                suites,
                run_id=run_id,
                offline=not args.allow_download,
                baseline=baseline,
                resume=bool(args.resume),
                shard=shard,
                pin_set=recorded_pin_set(getattr(args, "pin_set_record", None)),
                turns=turns,
                selection=(f"-k {args.k}",) if args.k else (),
                allow_dirty_machine=allow_dirty_machine(
                    getattr(args, "allow_dirty_machine", False)
                ),
                allow_model_change=bool(getattr(args, "allow_model_change", False)),
                allow_machine_change=bool(getattr(args, "allow_machine_change", False)),
            )
        except KeyboardInterrupt as exc:
            return as_interrupt(exc).exit_status
        active.plan(cases)
        pending = active.pending(cases)
        if args.resume:
            print(
                f"resuming {active.run_id}: {len(cases) - len(pending)} of {len(cases)} "
                "cases already have a final status",
                flush=True,
            )
        progress = _progress(args, pending)
        try:
            if turns is not None:  # every run's start-up in turn, before anything is measured
                turns.pass_turn()
            with progress:
                for case in pending:
                    progress.start(case.case_id, case.model.key)
                    result = active.run_case(case, progress.progressed)
                    progress.done(case_line(result), case.model.key)
        except KeyboardInterrupt as exc:
            stop = as_interrupt(exc)
            with signals_deferred():
                for result in active.interrupt(stop):
                    print(case_line(result), flush=True)
            print(f"{stop.reason}: stopped the workers; partial report follows", file=sys.stderr)
        try:
            end = conclude(
                active, render=not args.no_report, thresholds=chosen_exit_rules(args).thresholds
            )
        except KeyboardInterrupt:
            print(
                "interrupted again: the record is kept, the report was not written", file=sys.stderr
            )
            return active.stopped.exit_status if active.stopped else 130
    return _summarize(args, active, end)


def _progress(args: argparse.Namespace, cases: Sequence[Case]) -> RunProgress:
    """Live progress on a terminal, plain lines (and ``still running``) in a log: ``--progress``."""
    from harness.report.progress import RunProgress, choose_mode, make_console

    mode = choose_mode(getattr(args, "progress", "auto"), sys.stdout)
    plan = [(c.case_id, c.model.key) for c in cases]
    every_s = float(getattr(args, "still_running_every", 20.0))
    return RunProgress(plan, mode, make_console(sys.stdout), every_s=max(every_s, 0.05))


def case_line(result: CaseResult) -> str:
    """``   status  case-id  (reason)  [policy warning]``, terminal-safe."""
    from harness.report.escape import plain
    from harness.results.preflight_record import warning_line

    reason = f"  ({plain(result.reason, 300)})" if result.reason else ""
    flag = warning_line(result.preflight)
    flag_text = f"  [{plain(flag, 200)}]" if flag else ""
    return f"{result.status.value:>11}  {plain(result.case_id)}{reason}{flag_text}"


def _summarize(args: argparse.Namespace, active: ActiveRun, end: RunEnd) -> int:
    from harness.report import terminal_summary
    from harness.report.comparison_text import comparison_lines, gate_lines
    from harness.report.machine_state import machine_lines

    print("\n".join(terminal_summary(end.run)))
    for line in (
        *gate_lines(end.run),
        *machine_lines(end.run),
        *(comparison_lines(end.comparison) if end.comparison else ()),
    ):
        print(line)
    if end.report_html is not None:
        print(f"report: {end.report_html}")
    if end.report_error is not None:
        print(f"mlx-harness: error: {end.report_error}", file=sys.stderr)
    if active.stopped is not None:
        from harness.report.escape import plain

        print(f"resume with: {plain(resume_command(args, active.run_id), 2000)}", file=sys.stderr)
        return active.stopped.exit_status
    from harness.drive.exit_rules import exit_lines

    rules = chosen_exit_rules(args)
    judged = exit_lines(end.run, end.comparison, rules, shard=bool(args.shard))
    from harness.drive.exit_rules import note_lines

    for line in (*note_lines(end.run, end.comparison), *judged):
        print(line)
    ok = all(r.status.is_ok for r in end.run.results) and not judged
    return 0 if ok and end.report_error is None else 1
