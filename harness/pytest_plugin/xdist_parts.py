"""pytest-xdist for correctness-only suites: ``pytest -n auto suites/`` spreads the models over
worker processes and still ends in one run record, one report and one terminal summary.

- Distribution: ``-n`` without ``--dist`` becomes ``--dist loadgroup`` (:func:`choose_loadgroup`)
  and every case is in its model's ``xdist_group`` (:func:`group_of`): one worker runs all of a
  model's cases, so the model loads once (the controller schedules by its own plan:
  :mod:`harness.pytest_plugin.xdist_schedule`).
- One run: the controller picks the run id (``--run-id`` or a new one) and hands it to the workers
  in ``workerinput``; each worker records the cases it runs in its own part,
  ``reports/<run>/parts/<run>-gwN/run.jsonl`` (:func:`worker_part`).
- Timing refuses: with more than one worker, a planned case of a scenario that
  ``measures_time`` is a usage error (one line, exit status 4) before any case runs; workers
  sharing the machine would skew its figures.
- The controller collects nothing itself: it plans the suite files the workers collected (the plan
  is deterministic), and at its session end joins the parts with
  :func:`harness.results.merge.merge_runs` into ``reports/<run>/run.jsonl``: every collected case
  exactly once (one that no worker recorded is ``interrupted``), in collection order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness.core.types import Case, ExpectKind, RunRecord

if TYPE_CHECKING:
    from harness.pytest_plugin.state import HarnessState

WORKER_INPUT = "mlx_harness"  # the key of the controller's share in xdist's ``workerinput``
PARTS = "parts"  # reports/<run>/parts/<part>/run.jsonl
SUITE_SUFFIXES = (".suite.yaml", ".suite.yml")


@dataclasses.dataclass(frozen=True)
class RunShare:
    """What the controller hands every worker: the run it records into."""

    run_id: str
    report_root: str  # absolute, so a worker's own working folder does not matter
    loadgroup: bool  # the controller schedules by xdist_group: the workers must name the groups


def choose_loadgroup(config: pytest.Config) -> None:
    """``-n N`` without ``--dist``: ``loadgroup``, so a model's cases stay in one worker.
    Runs before xdist's own ``pytest_cmdline_main``, which would make it ``load``."""
    option = config.option
    if (
        getattr(option, "numprocesses", None)
        and getattr(option, "dist", "no") == "no"
        and not getattr(option, "distload", False)
    ):
        option.dist = "loadgroup"


def worker_count(config: pytest.Config) -> int:
    """How many xdist workers this process (the controller) starts; 0 when not distributing."""
    if hasattr(config, "workerinput") or config.getoption("collectonly"):
        return 0
    if getattr(config.option, "dist", "no") == "no":
        return 0
    return len(getattr(config.option, "tx", None) or ())


def worker_share(config: pytest.Config) -> RunShare | None:
    """The run this xdist worker records into; None outside a worker of a harness run."""
    workerinput = getattr(config, "workerinput", None)
    share = workerinput.get(WORKER_INPUT) if isinstance(workerinput, dict) else None
    return RunShare(**share) if isinstance(share, dict) else None


def worker_part(config: pytest.Config) -> tuple[Path, str] | None:
    """(report root, run id) of this xdist worker's part, ``<root>/<run>/parts/<run>-gwN``; the
    part's run id names the run too, so parts of two runs merged later never clash. None
    outside a worker of a harness run."""
    share = worker_share(config)
    if share is None:
        return None
    worker_id = getattr(config, "workerinput", {}).get("workerid", "gw")
    return Path(share.report_root) / share.run_id / PARTS, f"{share.run_id}-{worker_id}"


def in_worker(config: pytest.Config) -> bool:
    """Whether this process is a pytest-xdist worker (its controller joins the records)."""
    return hasattr(config, "workerinput")


def group_of(case: Case) -> str:
    """The case's xdist group: its model (xdist reads the group after the id's last ``@``)."""
    return case.model.key.replace("@", "_").replace("]", "_")


def measures_time(scenario: str) -> bool:
    from harness.scenarios import SCENARIOS

    return SCENARIOS.get(scenario).measures_time


def timing_refusal(cases: Sequence[tuple[str, Case]], workers: int) -> str | None:
    """One line when a planned case (``(suite file, case)``) measures time and ``workers`` > 1
    would share the machine; None when the plan is correctness only. A case the ledger skips
    runs nothing and is not counted."""
    if workers <= 1:
        return None
    timing: dict[str, dict[str, None]] = {}
    for suite_file, case in cases:
        expectation = case.expectation
        if expectation is not None and expectation.kind is ExpectKind.SKIP:
            continue
        if measures_time(case.scenario):
            timing.setdefault(suite_file, {})[case.scenario] = None
    if not timing:
        return None
    from harness.results.report_dir import shown

    suite_file, names = next(iter(timing.items()))
    verb = "measures" if len(names) == 1 else "measure"
    more = len(timing) - 1
    also = f" (and {more} more suite file{'s' if more > 1 else ''})" if more else ""
    return (
        f"{shown(suite_file)}: {', '.join(names)} {verb} time and cannot share this machine with "
        f"parallel workers (-n {workers}){also}; run it without -n, or select correctness-only "
        "cases (-k / -m)"
    )


def planned_cases(
    root: Path, ids: Sequence[str], allow_download: bool
) -> list[tuple[str, str, Case]]:
    """The harness cases among a worker's collected node ids, in their order, as (node id,
    suite file's node id, case); the controller plans those suite files as the workers did."""
    from harness.spec.loader import load_suite
    from harness.spec.plan import plan

    by_id: dict[str, tuple[str, Case]] = {}
    planned_files: set[str] = set()
    out: list[tuple[str, str, Case]] = []
    for nodeid in ids:
        suite_file = nodeid.split("::", 1)[0]
        if suite_file.endswith(SUITE_SUFFIXES) and suite_file not in planned_files:
            planned_files.add(suite_file)
            for case in plan(load_suite(root / suite_file), allow_download=allow_download):
                base = f"{suite_file}::{case.model.key}::{case.case_id.rsplit('::', 1)[1]}"
                by_id[base] = by_id[f"{base}@{group_of(case)}"] = (suite_file, case)
        if nodeid in by_id:
            out.append((nodeid, *by_id[nodeid]))
    return out


def join_parts(
    part_files: Sequence[Path], run_id: str, planned: Sequence[Case], not_run: str
) -> RunRecord:
    """One record of the workers' parts: their cases, then each planned case no part holds as
    ``interrupted`` (``not_run`` says why), in plan order. The record reads as one run on one
    machine (no parts), holding the shard the workers ran, if any; it is finished only when every
    part finished and every planned case has a result."""
    from harness.results.merge import Source, merge_runs
    from harness.results.report_dir import shown
    from harness.results.store import load_run
    from harness.runner.outcome import interrupted

    runs = [load_run(file) for file in part_files]
    shard = next((run.shard for run in runs if run.shard is not None), None)
    sources = [
        Source(shown(file), dataclasses.replace(run, shard=None))  # each part: the same shard
        for file, run in zip(part_files, runs, strict=True)
    ]
    merged = merge_runs(sources, run_id)
    recorded = {result.case_id for result in merged.results}
    missing = [interrupted(case, not_run) for case in planned if case.case_id not in recorded]
    order = {case.case_id: index for index, case in enumerate(planned)}
    results = sorted((*merged.results, *missing), key=lambda r: order.get(r.case_id, len(order)))
    return dataclasses.replace(
        merged,
        results=tuple(results),
        parts=(),
        shard=shard,
        finished_at=None if missing else merged.finished_at,
    )


class XdistController:
    """The controller's side of a distributed harness run (registered only there).

    ``state`` is the harness plugin's session state: this sets its ``planned`` and ``end``.
    """

    def __init__(
        self, config: pytest.Config, state: HarnessState, share: RunShare, workers: int
    ) -> None:
        self.config = config
        self.state = state
        self.share = share
        self.workers = workers
        self.planned: list[Case] | None = None  # None until the first worker has collected
        self.groups: dict[str, str] = {}  # node id -> model group, for the scheduler
        self.concluded = False  # the run was joined and judged (or that was tried)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") != "loadgroup":
            return None  # a --dist the user chose: xdist's own
        from harness.pytest_plugin.xdist_schedule import ModelScheduling

        return ModelScheduling(config, log, self.groups)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKER_INPUT] = dataclasses.asdict(self.share)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        if self.planned is not None:
            return  # every worker collects the same items (xdist checks)
        cases = planned_cases(
            Path(self.config.rootpath), ids, bool(self.config.getoption("allow_download"))
        )
        refusal = timing_refusal([(file, case) for _, file, case in cases], self.workers)
        if refusal is not None:
            raise pytest.UsageError(refusal)
        self.planned = [case for _, _, case in cases]
        self.state.planned = self.planned
        self.groups.update({nodeid: group_of(case) for nodeid, _, case in cases})

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """A run that went to its end is joined and judged here, before junitxml writes its
        file, so the exit rules' failed test ``mlx-harness::policy`` is in it: every worker has
        ended its session, so every part is closed. A stopped run (-x, a signal) raises
        instead and is joined at the session's end, once xdist has stopped the workers."""
        result = yield
        self._conclude(session)
        return result

    @pytest.hookimpl(trylast=True)  # after xdist has stopped its workers: every part is closed
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.concluded:
            self._conclude(session)

    def _conclude(self, session: pytest.Session) -> None:
        from harness.drive.run_end import conclude_record

        self.concluded = True
        from harness.results.merge import MergeError
        from harness.results.store import RUN_FILE, RunFileError, write_record

        if not self.planned:
            return  # refused, or nothing collected: no run to record
        root = Path(self.share.report_root)
        run_dir = root / self.share.run_id
        parts = sorted((run_dir / PARTS).glob(f"*/{RUN_FILE}"))
        if not parts:
            return  # stopped before any worker ran a case
        early = getattr(self.config.pluginmanager.get_plugin("dsession"), "shouldstop", None)
        stop = self.state.stop
        if early:  # -x / --maxfail: xdist stopped handing out cases
            not_run = f"not run: pytest stopped early ({early})"
        else:
            not_run = f"not run: {stop.reason}" if stop is not None else "not run: no worker ran it"
        try:
            run = write_record(join_parts(parts, self.share.run_id, self.planned, not_run), run_dir)
        except (MergeError, RunFileError, OSError) as exc:  # OSError: ReportDirError
            line = f"mlx-harness: the workers' parts were not joined: {exc}"
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(line)
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            from harness.pytest_plugin.exit_report import report_exit_findings

            report_exit_findings(self.config, [line])
            return
        render = not self.config.getoption("no_report")
        rules = self.state.exit_rules
        end = conclude_record(
            run,
            run_dir,
            root,
            self.state.baseline,
            render=render,
            thresholds=rules.thresholds if rules is not None else None,
        )
        self.state.end = end
        from harness.pytest_plugin.exit_report import judge_pytest_session

        judge_pytest_session(session, self.state, end, shard=self.state.split is not None)
        from harness.pytest_plugin.exit_report import failing_lines, report_exit_findings

        report_exit_findings(self.config, failing_lines(self.state, end))


def setup_xdist(config: pytest.Config, state: HarnessState, report_root: Path) -> None:
    """At configure: a worker names the groups when the controller schedules by them; the
    controller checks the run can be written and registers :class:`XdistController`."""
    share = worker_share(config)
    if share is not None:
        if share.loadgroup:
            config.option.loadgroup = True  # xdist appends the group to the node ids
        return
    workers = worker_count(config)
    if workers == 0:
        return
    from harness.results.report_dir import shown
    from harness.results.store import RUN_FILE, check_report_root
    from harness.runner.active_run import new_run_id

    if config.getoption("resume", None):
        raise pytest.UsageError(
            f"--resume cannot run with parallel workers (-n {workers}); resume without -n"
        )
    run_id = config.getoption("run_id", None) or new_run_id()
    try:
        check_report_root(report_root)
    except OSError as exc:  # ReportDirError is one
        raise pytest.UsageError(str(exc)) from None
    if (report_root / run_id / RUN_FILE).exists() or (report_root / run_id / PARTS).exists():
        raise pytest.UsageError(
            f"run id '{shown(run_id)}' already exists in {shown(report_root)}; choose another "
            "--run-id"
        )
    share = RunShare(run_id, str(report_root.resolve()), config.option.dist == "loadgroup")
    config.pluginmanager.register(
        XdistController(config, state, share, workers), "mlx-harness-xdist"
    )
