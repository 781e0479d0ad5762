"""The command-line driver: thin wrappers over the same functions the pytest plugin uses."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

from harness.cli_errors import CliError

SUITE_SUFFIXES = (".suite.yaml", ".suite.yml")  # what pytest collects too


def _suite_paths(paths: Iterable[str]) -> list[Path]:
    """Suite files named on the command line, directories searched for them (recursively).

    Anything else is a one-line error naming the path: nothing to find, a directory without
    suites, a file whose name pytest would not collect, a pipe, socket or device.
    """
    import stat

    from harness.spec.errors import one_line
    from harness.spec.suite_text import file_kind

    found: list[Path] = []
    for raw in paths:
        path, shown = Path(raw), one_line(raw)
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            raise CliError(f"{shown}: no such file or directory") from None
        except OSError as exc:
            raise CliError(f"{shown}: cannot read ({exc.strerror}); check the path") from None
        if stat.S_ISDIR(mode):
            suites = sorted(p for s in SUITE_SUFFIXES for p in path.rglob(f"*{s}"))
            if not suites:
                raise CliError(
                    f"{shown}: no *.suite.yaml files in this directory (or below it); "
                    "give a suite file or a directory that holds some"
                )
            found.extend(suites)
        elif not stat.S_ISREG(mode):
            raise CliError(f"{shown}: {file_kind(mode)}, not a suite file; give a *.suite.yaml")
        elif not path.name.endswith(SUITE_SUFFIXES):
            raise CliError(
                f"{shown}: not a suite file (the name must end in .suite.yaml, as pytest "
                "collects); rename it, or list it under a suite's include:"
            )
        else:
            found.append(path)
    return found


def cmd_validate(args: argparse.Namespace) -> int:
    import datetime as dt

    from harness.spec.errors import SuiteInvalid
    from harness.spec.ledger import overdue_warnings
    from harness.spec.loader import load_suite
    from harness.spec.plan import plan
    from harness.spec.selection_text import detail_lines, summary_line

    failed = 0
    today = dt.date.today()
    for path in _suite_paths(args.paths):
        try:
            loaded = load_suite(path)
        except SuiteInvalid as exc:
            failed += 1
            for error in exc.errors:
                print(error, file=sys.stderr)
            continue
        cases = plan(loaded)
        print(f"{path}: ok ({len(loaded.models)} models, {len(cases)} cases)")
        for selection in loaded.selections:
            lines = detail_lines(selection) if args.expand else [summary_line(selection)]
            print("\n".join(f"  {line}" for line in lines))
        for warning in (*loaded.warnings, *overdue_warnings(loaded, today)):
            print(warning, file=sys.stderr)
    return 1 if failed else 0


def cmd_schema(args: argparse.Namespace) -> int:
    from harness.spec.schema import json_schema

    print(json.dumps(json_schema(), indent=2))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from harness.cli_run import run_command

    return run_command(args, _suite_paths(args.paths))


def cmd_bisect(args: argparse.Namespace) -> int:
    from harness.cli_bisect import bisect_command

    return bisect_command(args, _suite_paths(args.paths))


def cmd_report(args: argparse.Namespace) -> int:
    """Render a run's reports; exit as the CI policy judges the run (and the comparison)."""
    from harness.cli_policy import PolicyError, policy_from, policy_lines
    from harness.report.publish import publish_reports
    from harness.results.store import load_run

    try:
        policy = policy_from(lambda dest: getattr(args, dest, None))
    except PolicyError as exc:
        raise CliError(str(exc)) from None
    path = Path(args.run)
    run = load_run(path)
    run_dir = path if path.is_dir() else path.parent
    sections = None
    comparison = None
    if args.baseline:
        from harness.report.comparison import with_comparison
        from harness.report.comparison_text import comparison_lines
        from harness.results.compare import compare_runs
        from harness.results.store import RunFileError

        try:
            baseline = load_run(Path(args.baseline))
        except RunFileError as exc:
            raise CliError(f"--baseline: {exc}") from None
        comparison = compare_runs(baseline, run, thresholds=policy.thresholds)
        sections = with_comparison(comparison)
        print("\n".join(comparison_lines(comparison)))
    html = publish_reports(run, run_dir, None, sections)
    print(f"report: {html}")
    judged = policy_lines(run, comparison, policy, shard=run.shard is not None)
    for line in judged:
        print(line)
    failed = any(not r.status.is_ok for r in run.results)
    return 1 if judged or failed else 0


def cmd_export(args: argparse.Namespace) -> int:
    from harness.results.store import export_csv, load_run

    if not (args.csv or args.benchmark_json or args.format):
        raise CliError(
            "export needs --format parquet|jsonl, --csv PATH and/or --benchmark-json PATH"
        )
    path = Path(args.run)
    run = load_run(path)
    if args.format:
        from harness.results.sample_export import ExportFormat, ExportUnavailable, export_samples

        out_dir = Path(args.out_dir) if args.out_dir else (path if path.is_dir() else path.parent)
        out_dir.mkdir(parents=True, exist_ok=True)
        for fmt in dict.fromkeys(ExportFormat(f) for f in args.format):
            try:
                print(f"wrote {export_samples(run, fmt, out_dir / fmt.file_name)}")
            except ExportUnavailable as exc:
                raise CliError(str(exc)) from None
    if args.csv:
        print(f"wrote {export_csv(run, Path(args.csv))}")
    if args.benchmark_json:
        from harness.results.benchmark_json import pytest_benchmark_json

        Path(args.benchmark_json).write_text(json.dumps(pytest_benchmark_json(run), indent=2))
        print(f"wrote {args.benchmark_json}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from harness.cli_policy import Policy, policy_lines
    from harness.report import render_html, render_markdown
    from harness.report.comparison import section
    from harness.report.comparison_text import comparison_lines
    from harness.results.ci_policy import PolicyError, parse_fail_on
    from harness.results.compare import Thresholds, compare_runs
    from harness.results.store import load_run

    try:  # compare's job is regressions: they always count
        policy = Policy(args.fail_on, True, Thresholds())
        parse_fail_on(args.fail_on, regression=True)
    except PolicyError as exc:
        raise CliError(str(exc)) from None
    baseline, current = load_run(Path(args.baseline)), load_run(Path(args.current))
    comparison = compare_runs(
        baseline,
        current,
        thresholds=Thresholds(
            alpha=args.alpha,
            min_effect=args.min_effect,
            allow_machine_change=args.allow_machine_change,
            allow_model_change=args.allow_model_change,
        ),
    )
    sections = [section(comparison)]
    markdown = render_markdown(current, sections)
    print(markdown)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.md").write_text(markdown)
        (out / "compare.html").write_text(render_html(current, sections))
        print(f"wrote {out / 'compare.md'} and {out / 'compare.html'}", file=sys.stderr)
    print("\n".join(comparison_lines(comparison)), file=sys.stderr)  # stdout stays Markdown
    judged = policy_lines(current, comparison, policy, shard=current.shard is not None)
    for line in judged:
        print(line, file=sys.stderr)
    return 1 if judged else 0


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a level between 0 and 1, e.g. 0.05")
    return value


def cmd_history(args: argparse.Namespace) -> int:
    from harness.results.history import find_runs, series

    runs = find_runs(Path(p) for p in args.paths)
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


def build_parser() -> argparse.ArgumentParser:
    from harness import __version__

    parser = argparse.ArgumentParser(prog="mlx-harness", description=__doc__)
    parser.add_argument("--version", action="version", version=f"mlx-harness {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="check suites without running them")
    p.add_argument("paths", nargs="+", help="suite files or directories")
    p.add_argument(
        "--expand",
        action="store_true",
        help="list every model each select: entry chose or left out (and why)",
    )
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("schema", help="print the suite JSON Schema (for editors)")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("run", help="run suites without pytest")
    p.add_argument("paths", nargs="+", help="suite files or directories")
    p.add_argument(
        "--report-dir",
        default="reports",
        help="where runs go: REPORT_DIR/RUN_ID/ (run.jsonl, reports)",
    )
    p.add_argument(
        "--run-id", default=None, help="name of the run (default: time and a random tag)"
    )
    p.add_argument("-k", default=None, help="only cases whose id contains this text")
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
    p.add_argument(
        "--resume",
        metavar="RUN_ID",
        default=None,
        help="continue an interrupted run: only cases without a final status run again",
    )
    p.add_argument(
        "--baseline",
        default=None,
        help="a run record (run.jsonl or its directory) to compare with; enables relative gates",
    )
    from harness.cli_policy import add_policy_options

    add_policy_options(p.add_argument)
    p.add_argument(
        "--shard",
        metavar="I/N",
        default=None,
        help="run only shard I of N (split by model, the same on every machine); "
        "join the shards' runs with mlx-harness merge",
    )
    from harness.cli_pin_sets import add_run_options

    add_run_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("report", help="render report.md/report.html from a run record")
    p.add_argument("run", help="run directory or run.jsonl")
    p.add_argument(
        "--baseline", default=None, help="a run to compare with: adds the comparison section"
    )
    from harness.cli_policy import add_policy_options

    add_policy_options(p.add_argument)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("export", help="export a run's raw samples")
    p.add_argument("run", help="run directory or run.jsonl")
    p.add_argument(
        "--format",
        action="append",
        choices=("parquet", "jsonl"),
        help="write every sample with all its case's params as columns to samples.parquet "
        "(needs the parquet extra: pyarrow) or samples.jsonl; repeat for both",
    )
    p.add_argument(
        "--out-dir", default=None, help="where --format writes its files (default: the run's)"
    )
    p.add_argument("--csv", help="write every raw sample as CSV")
    p.add_argument("--benchmark-json", help="write timing metrics as pytest-benchmark JSON")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("compare", help="compare two runs; exit 1 on regressions")
    p.add_argument("baseline", help="baseline run directory or run.jsonl")
    p.add_argument("current", help="current run directory or run.jsonl")
    p.add_argument("--out", help="also write compare.md and compare.html here")
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
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("history", help="a metric over runs, with step changes attributed")
    p.add_argument("paths", nargs="+", help="directories holding run records")
    p.add_argument("--metric", required=True, help="metric name, e.g. throughput.decode_tps")
    p.add_argument("--case", default=None, help="only cases whose id contains this text")
    p.add_argument(
        "--min-effect",
        type=float,
        default=0.05,
        help="smallest relative step that counts as a change (0.05: 5%%)",
    )
    p.set_defaults(func=cmd_history)

    from harness.cli_bisect import add_parser as add_bisect
    from harness.cli_matrix import add_parser as add_matrix
    from harness.cli_merge import add_parser as add_merge
    from harness.cli_models import add_parsers as add_models
    from harness.cli_probe import add_parser as add_probe
    from harness.cli_scenarios import add_parser as add_scenarios
    from harness.cli_toolcalls import add_parser as add_toolcalls

    add_models(sub)
    add_toolcalls(sub)
    add_probe(sub)
    add_scenarios(sub)
    add_merge(sub)
    add_matrix(sub)
    add_bisect(sub).set_defaults(func=cmd_bisect)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from harness.results.store import ReportDirError, RunFileError

    try:
        args = build_parser().parse_args(argv)
        with _read_warnings_as_lines():
            return int(args.func(args))
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (CliError, RunFileError, ReportDirError) as exc:
        print(f"mlx-harness: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file the command was told to write or read
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"mlx-harness: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug of ours: one line here, the traceback in a file
        print(f"mlx-harness: internal error: {_internal_error(exc)}", file=sys.stderr)
        return 3


@contextlib.contextmanager
def _read_warnings_as_lines() -> Iterator[None]:
    """Run-record warnings (a cut last line skipped, a record skipped) as stderr lines."""
    from harness.results.store import RunReadWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", RunReadWarning)
        shown = warnings.showwarning

        def show(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            if issubclass(category, RunReadWarning):
                print(f"mlx-harness: warning: {message}", file=sys.stderr)
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


def _internal_error(exc: BaseException) -> str:
    """One line for an unexpected exception; its traceback goes to a file named in the line."""
    import tempfile
    import traceback

    from harness.exception_line import exception_line

    line = exception_line(exc)
    try:
        with tempfile.NamedTemporaryFile(
            "w", prefix="mlx-harness-error-", suffix=".log", delete=False
        ) as fh:
            fh.write("".join(traceback.format_exception(exc)))
    except OSError:
        return line
    return f"{line} (traceback in {fh.name}; please report it)"


if __name__ == "__main__":
    sys.exit(main())
