"""The pytest driver: ``pytest suites/`` collects ``*.suite.yaml`` and runs each case in a worker.

Hierarchy: suite file -> model -> case, so node ids read
``suites/smoke.suite.yaml::tiny-llama::throughput[prompt_tokens=128]``. Items are ordered so
each model loads once; the run record is appended case by case; reports render at the end.
This module holds the hooks (the ``pytest11`` entry point names it); beside it,
``xdist_parts`` and ``xdist_schedule`` (pytest-xdist: a part of the record per worker, cases
scheduled by model), ``benchmark_bridge`` (pytest-benchmark's fixture as a scenario),
``exit_report`` (the exit rules as a failed test) and ``state`` (what a session keeps). What
``mlx-harness run`` does the same way is in :mod:`harness.drive`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Generator, Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness.core.types import Case, ExpectKind, Status
from harness.pytest_plugin.exit_report import failing_lines, report_exit_findings
from harness.pytest_plugin.state import STATE, HarnessState
from harness.pytest_plugin.xdist_parts import (
    choose_loadgroup,
    group_of,
    in_worker,
    setup_xdist,
    worker_part,
)

if TYPE_CHECKING:
    from harness.runner.active_run import ActiveRun
    from harness.runner.client import OnProgress

MARKER_PREFIX_HELP = "mlx-harness: "


class CaseFailed(Exception):
    """A case that did not pass; shown as one short line, not a traceback."""


class CaseXPassed(Exception):
    """A strict known-broken case that passed: its ledger entry should go (a plain failure)."""


class HarnessWarning(pytest.PytestWarning):
    """A suite problem that does not stop the run: an empty selector, an overdue ledger entry."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mlx-harness", "mlx-harness suites")
    group.addoption(
        "--report-dir",
        default=None,
        help="where runs and reports land (default: <rootdir>/reports)",
    )
    group.addoption("--run-id", default=None, help="name of this run's directory")
    group.addoption(
        "--allow-download",
        action="store_true",
        default=False,
        help="allow hub downloads for models not in the local cache",
    )
    from harness.drive.run_options import add_run_options

    add_run_options(group.addoption)  # the options mlx-harness run shares
    group.addoption(
        "--shard",
        default=None,
        metavar="I/N",
        help="run only shard I of N of the suites' cases (split by model, the same on every "
        "machine); join the shards' runs with mlx-harness merge",
    )
    group.addoption(
        "--still-running-every",
        type=float,
        default=20.0,
        metavar="SECONDS",
        help="print a 'still running: CASE' line this often during a long case (0: never; "
        "none with -q)",
    )


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, object, object]:
    """``-n N`` (pytest-xdist) without ``--dist``: ``loadgroup``, one worker per model."""
    choose_loadgroup(config)
    return (yield)


def pytest_configure(config: pytest.Config) -> None:
    from harness.results.store import RunFileError, load_run

    state = HarnessState()
    baseline = config.getoption("baseline", None)
    if baseline:
        try:
            state.baseline = load_run(Path(baseline))
        except RunFileError as exc:
            raise pytest.UsageError(f"--baseline: {exc}") from None
    from harness.drive.exit_rules import FailOnError, exit_rules_from
    from harness.drive.run_options import different_runs

    error = different_runs(config.getoption("run_id", None), config.getoption("resume", None))
    if error is not None:
        raise pytest.UsageError(error)

    try:
        state.exit_rules = exit_rules_from(lambda dest: config.getoption(dest, None))
    except FailOnError as exc:
        raise pytest.UsageError(str(exc)) from None
    shard = config.getoption("shard", None)
    if shard is not None:
        from harness.spec.shard import ShardError, parse_shard

        try:
            state.split = parse_shard(shard)
        except ShardError as exc:
            raise pytest.UsageError(str(exc)) from None
    config.stash[STATE] = state
    setup_xdist(config, state, _report_root(config))  # -n N: parts joined into one run
    config.addinivalue_line("markers", "harness_case: a case planned from a *.suite.yaml file")
    config.pluginmanager.import_plugin("harness.pytest_plugin.benchmark_bridge")  # mlx_model


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name.endswith((".suite.yaml", ".suite.yml")):
        return SuiteFile.from_parent(parent, path=file_path)
    return None


def _register_marker(config: pytest.Config, name: str) -> None:
    state = config.stash[STATE]
    if name not in state.markers:
        state.markers.add(name)
        config.addinivalue_line("markers", f"{name}: {MARKER_PREFIX_HELP}scenario/backend/tag")


def _safe_mark(name: str) -> str:
    from harness.spec.marker_names import marker_name

    return marker_name(name)


class SuiteFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        from harness.spec.ledger import overdue_warnings
        from harness.spec.loader import load_suite
        from harness.spec.plan import plan, suite_info

        loaded = load_suite(self.path)
        state = self.config.stash[STATE]
        cases = plan(loaded, allow_download=bool(self.config.getoption("allow_download")))
        state.suites[str(self.path)] = suite_info(loaded, cases)
        for warning in (*loaded.warnings, *overdue_warnings(loaded, dt.date.today())):
            self.warn(HarnessWarning(str(warning)))
        if not cases:
            self.warn(HarnessWarning(f"{self.path}: the suite plans no cases"))
        groups: dict[str, list[Case]] = {}
        for case in cases:
            groups.setdefault(case.model.key, []).append(case)
        for key, model_cases in groups.items():
            yield ModelGroup.from_parent(self, name=key, cases=model_cases)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        from harness.spec.errors import SuiteInvalid

        if isinstance(excinfo.value, SuiteInvalid):
            self.config.stash[STATE].bad_input = True
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class ModelGroup(pytest.Collector):
    def __init__(self, *, cases: list[Case], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cases = cases

    def collect(self) -> Iterator[pytest.Item]:
        for case in self.cases:
            yield CaseItem.from_parent(self, name=case.case_id.rsplit("::", 1)[1], case=case)


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.add_marker("harness_case")
        if in_worker(self.config):  # pytest-xdist: one group per model, one load
            self.add_marker(pytest.mark.xdist_group(group_of(case)))
        for mark in case.marks:
            name = _safe_mark(mark)
            _register_marker(self.config, name)
            self.add_marker(name)
        expectation = case.expectation
        if expectation is not None:
            if expectation.kind is ExpectKind.SKIP:
                self.add_marker(pytest.mark.skip(reason=expectation.reason))
            elif expectation.strict and not expectation.checks:  # a pass is XPASS, a failure
                # ("fixed upstream"); an entry naming checks is judged by the run (another
                # check's failure still fails), and runtest says what the record says
                reason = expectation.reason + (f" ({expectation.link})" if expectation.link else "")
                self.add_marker(pytest.mark.xfail(reason=reason, strict=True, raises=CaseFailed))
            # not strict: a pass is a plain pass, as the record says (runtest xfails a failure)

    @property
    def worker_key(self) -> Hashable:
        from harness.spec.plan import worker_key

        return worker_key(self.case)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, self.case.case_id

    def runtest(self) -> None:
        with _still_running(self.config, self.case) as on_progress:
            result = _active_run(self.config).run_case(self.case, on_progress)
        self.config.stash[STATE].results.append(result)
        self.user_properties.append(("status", result.status.value))
        if result.preflight is not None and result.preflight.policy is not None:
            self.user_properties.append(("policy", result.preflight.policy))
        for metric in result.metrics:
            self.user_properties.append(
                (f"{metric.name} [{metric.unit.value}]", f"{metric.median:.6g}")
            )
        if result.status is Status.XPASSED:
            raise CaseXPassed(result.reason or "XPASS: fixed upstream, remove entry")
        if result.status is Status.PASSED:
            return
        if result.status is Status.SKIPPED:
            pytest.skip(result.reason or "skipped")
        if result.status is Status.XFAILED and not self._strict_xfail:
            pytest.xfail(result.reason or "known")
        raise CaseFailed(f"{result.status.value}: {result.reason}")

    @property
    def _strict_xfail(self) -> bool:
        expectation = self.case.expectation
        return expectation is not None and expectation.strict and not expectation.checks

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, (CaseFailed, CaseXPassed)):
            return f"{self.case.case_id}: {excinfo.value}"
        return super().repr_failure(excinfo, style=style)


@contextmanager
def _still_running(config: pytest.Config, case: Case) -> Iterator[OnProgress | None]:
    """A ``still running: CASE (case 3/12, repeat 2/5 · 64 tokens) 20 s`` line every
    ``--still-running-every`` seconds of a long case (not with -q): a CI log shows the run is
    alive; pytest owns the terminal, so there is no animation. Yields the worker's progress
    callback (None when quiet)."""
    import time

    from harness.report.progress import RunningCase, StillRunning

    reporter = config.pluginmanager.get_plugin("terminalreporter")
    every_s = float(config.getoption("still_running_every"))
    if reporter is None or config.get_verbosity() < 0 or every_s <= 0:
        yield None
        return
    planned = config.stash[STATE].planned
    index = next((i for i, c in enumerate(planned, 1) if c.case_id == case.case_id), 0)
    running = RunningCase(case.case_id, case.model.key, index, len(planned), time.monotonic())
    with StillRunning(running, reporter.write_line, every_s) as ticker:
        yield ticker.progressed


def _report_root(config: pytest.Config) -> Path:
    option = config.getoption("report_dir")
    return Path(option) if option else Path(config.rootpath) / "reports"


def _active_run(config: pytest.Config) -> ActiveRun:
    from harness.drive.exit_rules import allow_dirty_machine
    from harness.runner.active_run import ActiveRun

    state = config.stash[STATE]
    if state.active is None:
        resume = config.getoption("resume")
        part = worker_part(config)  # a pytest-xdist worker records its part of the run
        root, run_id = part or (_report_root(config), resume or config.getoption("run_id"))
        state.active = ActiveRun(
            root,
            list(state.suites.values()),
            run_id=run_id,
            offline=not config.getoption("allow_download"),
            project_root=Path(config.rootpath),
            baseline=state.baseline,
            resume=bool(resume),
            shard=state.shard,
            selection=_selection(config),
            allow_dirty_machine=allow_dirty_machine(config.getoption("allow_dirty_machine")),
            allow_model_change=bool(config.getoption("allow_model_change")),
            allow_machine_change=bool(config.getoption("allow_machine_change")),
            say=_say(config),
        )
        state.active.plan(state.planned if part is None else [])  # a worker: what it runs
    return state.active


def _say(config: pytest.Config) -> Callable[[str], None] | None:
    """A line for the person running (the lazy llama-server build): pytest's terminal, which
    pytest owns (its capture would hold a print until the test ends); None: standard error."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return None

    def say(line: str) -> None:
        reporter.ensure_newline()
        reporter.write_line(line)

    return say


def _selection(config: pytest.Config) -> tuple[str, ...]:
    """How this session chose its cases: ``-k EXPR`` and ``-m EXPR``, as given."""
    chosen = []
    for flag, dest in (("-k", "keyword"), ("-m", "markexpr")):
        value = config.getoption(dest, None)
        if value:
            chosen.append(f"{flag} {value}")
    return tuple(chosen)


def active_run(config: pytest.Config) -> ActiveRun:
    """The run's :class:`harness.runner.active_run.ActiveRun`, opened on first use (the
    pytest-benchmark bridge records its benchmarks there)."""
    return _active_run(config)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember the selected cases; open the run record now, so a bad report folder or a
    reused run id is one line before anything runs; stop signals end the run cleanly."""
    from harness.results.store import RunFileError
    from harness.runner.signals import stop_on_signals

    config = session.config
    state = config.stash[STATE]
    state.planned = [item.case for item in session.items if isinstance(item, CaseItem)]
    if (not state.planned and state.shard is None) or config.option.collectonly:
        return  # an empty shard still opens its record: it says it holds nothing
    _suites_baseline(config, state)
    if in_worker(config):
        return  # a pytest-xdist worker opens its part with its first case
    try:
        _active_run(config)
    except (RunFileError, OSError) as exc:
        raise pytest.UsageError(str(exc)) from None
    state.signals.enter_context(stop_on_signals())


def _suites_baseline(config: pytest.Config, state: HarnessState) -> None:
    """Without ``--baseline``: the run the collected suites name (``baseline:``); a named run
    that is missing is a usage error (one line, nothing runs)."""
    from harness.results.named_baseline import NamedBaselineError, named_baseline

    if state.baseline is not None:
        return
    run_id = config.getoption("resume") or config.getoption("run_id")
    try:
        chosen = named_baseline(list(state.suites.values()), _report_root(config), run_id)
    except NamedBaselineError as exc:
        raise pytest.UsageError(str(exc)) from None
    state.baseline = chosen.run
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if chosen.line is not None and reporter is not None and not in_worker(config):
        reporter.write_line(chosen.line)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    """Note which signal stopped the run (pytest turns it into its own 'interrupted')."""
    from harness.runner.signals import as_interrupt

    try:
        return (yield)
    except KeyboardInterrupt as exc:
        state = session.config.stash.get(STATE, None)
        if state is not None:
            state.stop = as_interrupt(exc)
        raise


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is not None:
        state.signals.close()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Keep ``--shard``'s cases; stable-sort harness items so all cases of one model (across
    suites) run together. Last, so -k and -m have chosen first."""
    from harness.spec.plan import group_by_first_seen

    _keep_shard(config, items)
    items[:] = group_by_first_seen(
        items, lambda item: item.worker_key if isinstance(item, CaseItem) else None
    )


def _keep_shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--shard I/N``: keep only this shard's cases (of those -k and -m chose)."""
    state = config.stash[STATE]
    if state.split is None:
        return
    from harness.spec.shard import model_of, shard_line, shard_plan

    cases = [item.case for item in items if isinstance(item, CaseItem)]
    if not cases:
        return  # no suite cases at all: nothing to split, no record to open
    state.shard, kept = shard_plan(cases, *state.split)
    keep = {case.case_id for case in kept}
    chosen = [i for i in items if not isinstance(i, CaseItem) or i.case.case_id in keep]
    dropped = [i for i in items if isinstance(i, CaseItem) and i.case.case_id not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = chosen
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(shard_line(state.shard, len(kept), len({model_of(c) for c in kept})))


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop a model's worker as soon as its last case has run (frees its memory)."""
    state = item.config.stash[STATE]
    if not isinstance(item, CaseItem) or state.active is None:
        return
    if not isinstance(nextitem, CaseItem) or nextitem.worker_key != item.worker_key:
        state.active.close_worker()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if (
        isinstance(item, CaseItem)
        and call.when == "setup"
        and report.skipped
        and item.case.expectation is not None
        and item.case.expectation.kind is ExpectKind.SKIP
    ):
        result = _active_run(item.config).run_case(item.case)  # records the skip with its reason
        item.config.stash[STATE].results.append(result)
    return report


@pytest.hookimpl(
    tryfirst=True
)  # before junitxml writes its file: it carries the exit rules' finding
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from harness.drive.run_end import conclude
    from harness.runner.signals import RunInterrupted, signals_deferred

    state = session.config.stash.get(STATE, None)
    if state is not None and state.bad_input:
        session.exitstatus = pytest.ExitCode.USAGE_ERROR  # the README's table: bad input is 4
    if state is None or state.active is None:
        return
    if state.stop is None and exitstatus == pytest.ExitCode.INTERRUPTED:
        state.stop = RunInterrupted()  # pytest.exit() or a plugin stopped the run
    if state.stop is not None:
        with signals_deferred():
            state.active.interrupt(state.stop)
        session.exitstatus = state.stop.exit_status
    elif session.shouldstop or session.shouldfail:  # -x / --maxfail: the rest never ran
        why = f"not run: pytest stopped early ({session.shouldstop or session.shouldfail})"
        with signals_deferred():
            state.active.interrupt(RunInterrupted(why=why))
    render = not session.config.getoption("no_report") and not in_worker(session.config)
    thresholds = state.exit_rules.thresholds if state.exit_rules is not None else None
    state.end = conclude(state.active, render=render, thresholds=thresholds)  # xdist: controller
    if (
        state.shard is not None
        and not state.planned
        and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED
    ):
        session.exitstatus = pytest.ExitCode.OK  # an empty shard is a valid run
    from harness.pytest_plugin.exit_report import judge_pytest_session

    if not in_worker(session.config):  # xdist: the controller judges the joined run
        judge_pytest_session(session, state, state.end, shard=state.split is not None)
        report_exit_findings(session.config, failing_lines(state, state.end))


def resume_command(config: pytest.Config, run_id: str) -> str:
    """``pytest`` with this session's own arguments, its run id or resume replaced by
    ``--resume RUN_ID``: the whole command that goes on where this run stopped."""
    import shlex

    from harness.report.escape import plain

    words, skip = [], False
    for arg in config.invocation_params.args:
        if skip:
            skip = False
            continue
        if arg in ("--run-id", "--resume"):
            skip = True
            continue
        if arg.startswith(("--run-id=", "--resume=")):
            continue
        words.append(arg)
    return plain(shlex.join(["pytest", *words, "--resume", run_id]), 2000)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    state = config.stash.get(STATE, None)
    if state is None or state.end is None:
        return
    from harness.report import terminal_summary
    from harness.report.comparison_text import comparison_lines, gate_lines
    from harness.report.machine_state import machine_lines

    end = state.end
    terminalreporter.section("mlx-harness")
    lines = [*terminal_summary(end.run), *gate_lines(end.run), *machine_lines(end.run)]
    if end.comparison is not None:
        lines += comparison_lines(end.comparison)
    from harness.drive.exit_rules import note_lines

    lines += [*note_lines(end.run, end.comparison), *state.exit_lines]
    if end.report_html is not None:
        lines.append(f"report: {end.report_html}")
    if end.report_error is not None:
        lines.append(f"error: {end.report_error}")
    if state.active is not None and state.active.stopped is not None:
        lines.append(f"resume with: {resume_command(config, state.active.run_id)}")
    for line in lines:
        terminalreporter.write_line(line)
