"""One run: cases go to per-model workers, results are judged and appended as they land.

Before a case reaches a worker, the probe-and-policy step (:mod:`harness.runner.preflight`)
may skip it with its reason; its decision and memory estimate go into the case's record.

Both drivers (the pytest plugin and the CLI) use this; neither holds logic the other lacks.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.core.metrics import MetricSpec
from harness.core.types import (
    Case,
    CaseResult,
    ExpectKind,
    Gate,
    GateResult,
    Metric,
    ModelIdentity,
    PinSetInfo,
    RunRecord,
    Shard,
    Status,
    SuiteInfo,
)
from harness.probe.machine import MemoryBudget
from harness.results.comparability import machine_apart, not_comparable
from harness.results.machine_flags import REMEASURE, dirty_in
from harness.results.store import (
    RUN_FILE,
    ModelEvents,
    RunWriter,
    check_report_root,
    load_run,
)
from harness.runner.blas import planned_blas, worker_env
from harness.runner.client import OnProgress, WorkerClient, WorkerGone, WorkerProtocolError
from harness.runner.env_lock import environment_lock
from harness.runner.identity import ServedIdentity, load_request, model_identity, served_identity
from harness.runner.judge import busy_misses, judge
from harness.runner.machine import git_sha, machine, package_versions
from harness.runner.messages import (
    CrashReply,
    ErrorReply,
    LoadedReply,
    Reply,
    ResultReply,
    RunRequest,
)
from harness.runner.outcome import (
    HarnessFault,
    Outcome,
    bare,
    errored,
    interrupted,
    now,
    outcome_of,
    skip_cause,
)
from harness.runner.preflight import Preflight, Preflighter
from harness.runner.prerequisites import Prepared, ensure_llama_server, needs_llama_server
from harness.runner.remeasure import LiveMachine, MachineWatch, wait_bound
from harness.runner.remeasure import notes as remeasure_notes
from harness.runner.remeasure import record as remeasure_record
from harness.runner.rounds import (
    TIMING_ARTIFACT,
    RoundPlan,
    auto_stop,
    merge_round,
    per_run_names,
    plan_for,
    scenario_seconds,
    summed_timing,
    with_stop,
)
from harness.runner.signals import RunInterrupted, signals_deferred
from harness.runner.turns import Turns
from harness.scenarios.specs import all_specs
from harness.spec.plan import worker_key

HARNESS_LOG = "harness.log"


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _said(reply: Reply) -> str:
    """A reply that is not the one asked for, as one line: its error, else its kind."""
    if isinstance(reply, ErrorReply | CrashReply):
        return reply.error
    return f"unexpected '{reply.OP}' reply"


def new_run_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


@dataclass
class _LiveModel:
    case: Case  # the first case that needed this worker; its model is the one loaded
    client: WorkerClient | None = None
    load_error: str | None = None
    load_status: Status = Status.ERRORED  # failed: the suite's url: server did not answer
    device: str | None = None
    blas: str | None = None
    server: ServedIdentity | None = None


def _load_outcome(live: _LiveModel) -> Outcome:
    """Every case of a model whose load the worker refused: its load's status and line; a skip
    there is the suite's input (its server refused the suite's arguments)."""
    assert live.load_error is not None
    skipped = live.load_status is Status.SKIPPED
    return Outcome(live.load_status, live.load_error, input_skip=skipped)


class ActiveRun:
    """One run's record: cases in, exactly one result per planned case out.

    Every failure of the harness's own code while a case is handled (probe, policy, worker
    protocol, decoding, judging, serializing the result) becomes an ``errored`` result with a
    one-line reason; the traceback goes to ``logs/harness.log`` in the run folder. A stop
    (:meth:`interrupt`) records every planned case without a result as ``interrupted``.
    """

    def __init__(
        self,
        report_root: Path,
        suites: Iterable[SuiteInfo],
        *,
        run_id: str | None = None,
        offline: bool = True,
        project_root: Path | None = None,
        baseline: RunRecord | None = None,
        memory_budget: MemoryBudget | None = None,
        resume: bool = False,
        shard: Shard | None = None,
        pin_set: PinSetInfo | None = None,
        turns: Turns | None = None,
        selection: Sequence[str] = (),
        allow_dirty_machine: bool = False,
        allow_model_change: bool = False,
        allow_machine_change: bool = False,
        say: Callable[[str], None] | None = None,
        watch: MachineWatch | None = None,
    ) -> None:
        """``memory_budget`` fixes the policy's memory budget; by default the machine's.
        ``shard``: this run holds that shard of its plan (written in the record's start);
        ``pin_set``: the pin set whose environment this process runs in (written there too);
        ``turns``: the turn this run takes with the other pin sets' runs (timing cases are
        then measured in rounds, :mod:`harness.runner.rounds`).

        ``resume``: continue the record of ``run_id``; its cases with a final status are not
        run again (:meth:`run_case` returns what was recorded).
        ``say``: where a line for the person running goes (the lazy llama-server build's
        progress, :mod:`harness.runner.prerequisites`); standard error by default.
        ``watch``: the machine's state and the wait for quiet before a re-measure
        (:mod:`harness.runner.remeasure`); the machine itself by default, a script in tests.
        """

        check_report_root(report_root)
        self.run_id = run_id or new_run_id()
        self.report_root = report_root
        self.run_dir = report_root / self.run_id
        self.env = worker_env(os.environ, offline=offline)
        self.specs = all_specs()
        self.recorded: dict[str, CaseResult] = {}  # final results of the run being resumed
        if resume:
            previous = load_run(self.run_dir)
            self.recorded = {
                r.case_id: r for r in previous.results if r.status is not Status.INTERRUPTED
            }
        self.writer = RunWriter(self.run_dir / RUN_FILE, resume=resume)
        if resume:
            self.writer.resumed(now(), package_versions(), git_sha(project_root or Path.cwd()))
            # the record's machine is what its first workers saw: later ones do not change it
            seen = bool(previous.models)
            self._machine = ModelEvents(previous.machine, _device_seen=seen, _blas_seen=seen)
        else:
            self._machine = ModelEvents(machine(planned_blas(self.env)))
            self.writer.start(
                run_id=self.run_id,
                started_at=now(),
                machine=self._machine.machine,
                packages={**package_versions(), **(pin_set.pinned_versions() if pin_set else {})},
                git_sha=git_sha(project_root or Path.cwd()),
                suites=list(suites),
                shard=shard,
                pin_set=pin_set,
                lock=environment_lock(),
                selection=selection,
            )
        self.baseline = baseline
        self.allow_dirty_machine = allow_dirty_machine  # judge gates on a dirty machine anyway
        self.allow_model_change = allow_model_change  # relative gates across model files too
        self.allow_machine_change = allow_machine_change  # relative gates across machines too
        self._watch: MachineWatch = watch or LiveMachine()
        self.stopped: RunInterrupted | None = None
        self._baseline_cases = {r.case_id: r for r in baseline.results} if baseline else {}
        self._live: _LiveModel | None = None
        self._identities: dict[str, ModelIdentity] = {}  # this run's, by model key
        self._preflight = Preflighter(budget=memory_budget)
        self._probed: set[str] = set()
        self._planned: dict[str, Case] = {}
        self._results: dict[str, CaseResult] = {}  # this run's, by case id
        self._turns = turns
        self._case_turns = 0  # turns the current case has passed
        self._say = say or _to_stderr
        self._setup_s = 0.0  # seconds spent making prerequisites (never a case's own time)
        self._llama_server: Prepared | None = None  # made (or failed) once per run

    @property
    def log_path(self) -> Path:
        """Where the harness's own tracebacks go (the report links the run's logs folder)."""
        return self.run_dir / "logs" / HARNESS_LOG

    def plan(self, cases: Iterable[Case]) -> None:
        """The cases this run means to finish; a stop records the unfinished ones."""
        for case in cases:
            self._planned.setdefault(case.case_id, case)

    def pending(self, cases: Iterable[Case]) -> list[Case]:
        """The cases of ``cases`` that still need to run (all of them unless resuming)."""
        return [c for c in cases if c.case_id not in self.recorded]

    # -- workers ---------------------------------------------------------------------------
    def _model(self, case: Case) -> _LiveModel:
        if self._live is None or worker_key(self._live.case) != worker_key(case):
            self.close_worker()
            self._live = _LiveModel(case)
        return self._live

    def close_worker(self) -> None:
        if self._live is not None and self._live.client is not None:
            self._live.client.close()
        self._live = None

    def kill_worker(self) -> None:
        """Stop the current worker's process group now (no grace: the run is stopping)."""
        if self._live is not None and self._live.client is not None:
            self._live.client.kill()
            self._live.client.close(grace_s=0)
        self._live = None

    def _ensure_loaded(self, live: _LiveModel, timeout_s: float) -> WorkerClient:
        if live.client is not None and live.client.proc.poll() is None:
            return live.client
        problem = self._prerequisite_problem(live.case)
        if problem is not None:
            live.load_error = problem
            raise WorkerGone(problem)
        log = self.run_dir / "logs" / f"{live.case.model.key.replace('/', '_')}.log"
        client = WorkerClient(self.env, log)
        live.client = client
        reply = client.request(load_request(live.case.model, self.run_dir / "logs"), timeout_s)
        if not isinstance(reply, LoadedReply):
            client.close()
            live.client = None
            if isinstance(reply, ErrorReply) and reply.failed:  # a url: server not there
                live.load_status = Status.FAILED
                live.load_error = reply.error
            elif isinstance(reply, ErrorReply) and reply.skipped:  # cannot run here
                live.load_status = Status.SKIPPED
                live.load_error = reply.error
            else:
                live.load_error = f"load failed: {_said(reply)}"
            raise WorkerGone(live.load_error)
        live.device = reply.info.device
        live.server = served_identity(reply.info.details)
        live.blas = reply.blas
        return client

    def _prerequisite_problem(self, case: Case) -> str | None:
        """Make what the case's model needs before its worker starts (once a run); why
        it cannot be made, or None."""
        if not needs_llama_server(case.model):
            return None
        if self._llama_server is None:
            self._llama_server = ensure_llama_server(self._say)
            self._setup_s += self._llama_server.seconds
        return self._llama_server.problem

    def _record_identity(self, case: Case, live: _LiveModel) -> None:
        if case.model.key not in self._identities:
            identity = model_identity(case.model, live.server)
            self._identities[case.model.key] = identity
            self._machine.add({"identity": identity, "device": live.device, "blas": live.blas})
            with signals_deferred():
                self.writer.model(identity, device=live.device, blas=live.blas)

    def _check(self, case: Case) -> Preflight | None:
        """Probe (once per model, recorded) and policy for ``case``, before any load."""
        preflight = self._preflight.check(case)
        if case.model.key not in self._probed:
            probe = self._preflight.probe_record(case)
            if probe is not None:
                self._probed.add(case.model.key)
                with signals_deferred():
                    self.writer.probe(case.model.key, probe)
        return preflight

    # -- cases -----------------------------------------------------------------------------
    def _execute(self, case: Case, on_progress: OnProgress | None = None) -> Outcome:
        live = self._model(case)  # a switch of model stops the previous worker first
        with self._stage("probe and policy"):
            preflight = self._check(case)
            record = preflight.record() if preflight is not None else None
        if preflight is None:
            return self._run_in_worker(case, live, on_progress)
        if preflight.blocked:  # no worker starts for it
            return Outcome(Status.SKIPPED, preflight.reason, preflight=record)
        outcome = self._run_in_worker(case, live, on_progress)
        return dataclasses.replace(outcome, preflight=record)

    def _run_in_worker(
        self, case: Case, live: _LiveModel, on_progress: OnProgress | None = None
    ) -> Outcome:
        if live.load_error is not None:
            return _load_outcome(live)
        try:
            client = self._ensure_loaded(live, case.timeout_s)
        except WorkerGone as exc:
            live.client = None
            if live.load_error is not None:  # the backend said no: same answer for every case
                return _load_outcome(live)
            status = Status.TIMED_OUT if exc.timed_out else Status.CRASHED
            live.load_error = f"load {status.value}: {exc}"
            return Outcome(status, f"during load: {exc}")
        except WorkerProtocolError as exc:
            live.client = None
            live.load_error = f"load errored: {exc}"
            return Outcome(Status.ERRORED, f"harness error in worker protocol: {exc}")
        self._record_identity(case, live)
        plan = plan_for(case) if self._turns is not None else None
        if plan is None or plan.turns == 1:
            return self._request(live, client, case, case.warmup, case.repeats, on_progress)
        return self._in_rounds(live, client, case, plan, on_progress)

    def _request(
        self,
        live: _LiveModel,
        client: WorkerClient,
        case: Case,
        warmup: int,
        repeats: int,
        on_progress: OnProgress | None = None,
        *,
        auto: bool = True,
    ) -> Outcome:
        """One ``run`` request: ``warmup`` + ``repeats`` runs (with ``auto``: the case's
        ``repeats: auto`` decides in the worker)."""
        request = RunRequest(
            scenario=case.scenario,
            params=dict(case.params),
            repeats=repeats,
            warmup=warmup,
            timeout_s=case.timeout_s,  # the scenario cuts its requests before the kill
            cooldown_s=case.cooldown_s,  # machine-state guard: before the case, in the worker
            wait_for_quiet_s=case.wait_for_quiet_s,
            auto=case.auto_repeats if auto else None,  # repeats: auto
        )
        try:
            reply = client.request(request, case.timeout_s, on_progress)
        except WorkerGone as exc:
            live.client = None  # the next case of this model starts a fresh worker
            return Outcome(Status.TIMED_OUT if exc.timed_out else Status.CRASHED, str(exc))
        except WorkerProtocolError as exc:
            live.client = None
            return Outcome(Status.ERRORED, f"harness error in worker protocol: {exc}")
        if isinstance(reply, CrashReply):
            client.kill()
            live.client = None
            return Outcome(Status.CRASHED, reply.error)
        if not isinstance(reply, ResultReply):
            return Outcome(Status.ERRORED, _said(reply))
        with self._stage("reading the worker's result"):
            return outcome_of(reply)

    def _in_rounds(
        self,
        live: _LiveModel,
        client: WorkerClient,
        case: Case,
        plan: RoundPlan,
        on_progress: OnProgress | None = None,
    ) -> Outcome:
        """The case in rounds, the turn passed between them (:mod:`harness.runner.rounds`)."""
        outcome = self._request(
            live, client, case, case.warmup, plan.sizes[0], on_progress, auto=False
        )
        if outcome.status is not Status.PASSED:
            return outcome
        per_run = per_run_names(outcome, plan.sizes[0])
        taken, rounds, reason = plan.sizes[0], 1, None
        for size in plan.sizes[1:]:
            reason = auto_stop(case, outcome, plan, taken, scenario_seconds(outcome))
            if reason is not None:
                break
            self._pass_turn()
            more = self._request(live, client, case, 0, size, on_progress, auto=False)
            with self._stage("merging the rounds"):
                outcome = merge_round(outcome, more, per_run)
            taken, rounds = taken + size, rounds + 1
            if outcome.status is not Status.PASSED:
                return outcome
        if reason is None:
            reason = auto_stop(case, outcome, plan, taken, scenario_seconds(outcome))
        with self._stage("merging the rounds"):
            return with_stop(case, outcome, plan, taken, rounds, reason)

    def _pass_turn(self) -> None:
        """Hand the turn to the next pin set's run and wait for it (taking turns only)."""
        if self._turns is not None:
            self._turns.pass_turn()
            self._case_turns += 1

    def _end_turns(self, case: Case) -> None:
        """Pass the turns the case has left, so every pin set passes as many per case."""
        if self._turns is None:
            return
        planned = plan_for(case).turns
        while self._case_turns < planned:
            self._pass_turn()

    @contextmanager
    def _stage(self, stage: str) -> Iterator[None]:
        """Turn an exception of the harness's own code into :class:`HarnessFault` (logged)."""
        try:
            yield
        except HarnessFault:
            raise
        except Exception as exc:
            raise HarnessFault(stage, exc, self._log_traceback(stage, exc)) from exc

    def _log_traceback(self, stage: str, exc: BaseException) -> Path | None:
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("a", encoding="utf-8") as fh:
                fh.write(f"--- {now()} harness error in {stage}\n")
                fh.write("".join(traceback.format_exception(exc)))
        except OSError:
            return None
        return self.log_path

    def run_case(self, case: Case, on_progress: OnProgress | None = None) -> CaseResult:
        """Run ``case`` (or return its recorded result when resuming) and record it;
        ``on_progress`` hears of each of its runs as the worker ends it."""
        if case.case_id in self.recorded:
            return self.recorded[case.case_id]
        self._planned.setdefault(case.case_id, case)
        if self._turns is not None:
            self._turns.acquire()
            self._case_turns = 0
        waited_before = self._turns.waited_s if self._turns is not None else 0.0
        setup_before = self._setup_s
        started = now()
        start = time.perf_counter()
        try:
            with self._stage("running the case"):
                result = self._run_and_judge(case, started, start, on_progress)
        except HarnessFault as fault:
            if fault.stage == "running the case":  # the worker's state is unknown: restart it
                self.kill_worker()
            result = errored(case, started, time.perf_counter() - start, fault.line)
        # the case's own time: not the other pin sets' turns, nor a prerequisite's build
        waited = self._setup_s - setup_before
        if self._turns is not None:
            waited += self._turns.waited_s - waited_before
        if waited > 0:
            result = dataclasses.replace(result, duration_s=max(result.duration_s - waited, 0.0))
        recorded = self._record(case, result)
        self._end_turns(case)
        return recorded

    def _run_and_judge(
        self, case: Case, started: str, start: float, on_progress: OnProgress | None = None
    ) -> CaseResult:
        expectation = case.expectation
        gates: tuple[GateResult, ...] = ()
        if expectation is not None and expectation.kind is ExpectKind.SKIP:
            outcome = Outcome(Status.SKIPPED, expectation.reason)
            status, reason = outcome.status, outcome.reason
        else:
            outcome = self._measure(case, on_progress)
            before = self._baseline_cases.get(case.case_id)
            with self._stage("judging gates and expectations"):
                status, gates, reason = self._judge(case, outcome, before)
                misses = busy_misses(case, outcome.status, *self._judged_on(case, outcome, before))
            if misses:  # a miss on a busy machine: once more, once it is quiet
                outcome, (status, gates, reason) = self._remeasure(
                    case, outcome, before, misses, gates, on_progress
                )
        return dataclasses.replace(
            bare(case, status, reason, started, time.perf_counter() - start),
            metrics=outcome.metrics,
            gates=gates,
            artifacts=outcome.artifacts,
            scenario_version=outcome.version,
            preflight=outcome.preflight,
            checks=outcome.checks,
            skip_cause=skip_cause(case, outcome) if status is Status.SKIPPED else None,
        )

    def _measure(self, case: Case, on_progress: OnProgress | None) -> Outcome:
        outcome = self._execute(case, on_progress)
        return dataclasses.replace(outcome, artifacts=self._watch.measured(outcome.artifacts))

    def _judged_on(
        self, case: Case, outcome: Outcome, before: CaseResult | None
    ) -> tuple[
        tuple[Metric, ...],
        Mapping[str, MetricSpec],
        dict[str, Metric] | None,
        tuple[str, ...],
        tuple[str, ...],
    ]:
        """What the case's gates are judged on: its metrics, their specs, the baseline's
        metrics, why the machine was dirty, why the baseline's case is not comparable."""
        return (
            outcome.metrics,
            self.specs,
            {m.name: m for m in before.metrics} if before else None,
            () if self.allow_dirty_machine else dirty_in(outcome.artifacts),
            self._apart(case, outcome, before),
        )

    def _judge(
        self,
        case: Case,
        outcome: Outcome,
        before: CaseResult | None,
        notes: Mapping[Gate, str] | None = None,
    ) -> tuple[Status, tuple[GateResult, ...], str | None]:
        metrics, specs, baseline, dirty, apart = self._judged_on(case, outcome, before)
        return judge(
            case,
            outcome.status,
            metrics,
            outcome.reason,
            specs,
            baseline=baseline,
            dirty=dirty,
            checks=outcome.checks,
            apart=apart,
            notes=notes,
        )

    def _remeasure(
        self,
        case: Case,
        first: Outcome,
        before: CaseResult | None,
        misses: tuple[Gate, ...],
        gates: tuple[GateResult, ...],
        on_progress: OnProgress | None,
    ) -> tuple[Outcome, tuple[Status, tuple[GateResult, ...], str | None]]:
        """Wait for quiet and measure ``case`` once more (:mod:`harness.runner.remeasure`);
        the outcome now kept, with the ``remeasure`` artifact, and its judgement."""
        bound = wait_bound(case)
        with self._stage("waiting for a quiet machine to measure again"):
            wait = self._watch.wait_for_quiet(bound)
        done = remeasure_record(wait, bound, first.artifacts, first.metrics, gates)
        outcome = first
        if wait.quiet:
            outcome = self._measure(case, on_progress)
            timing = summed_timing(first.artifacts, outcome.artifacts)
            if timing is not None:  # both measurements' time in backend calls
                outcome.artifacts[TIMING_ARTIFACT] = timing
            if outcome.reason is not None and outcome.status is not Status.PASSED:
                outcome = dataclasses.replace(
                    outcome, reason=f"measured again once quiet: {outcome.reason}"
                )
        outcome.artifacts[REMEASURE] = done.to_json()
        again = dirty_in(outcome.artifacts) if wait.quiet and not self.allow_dirty_machine else ()
        with self._stage("judging gates and expectations"):
            notes = remeasure_notes(misses, done, again, gates, first.metrics)
            return outcome, self._judge(case, outcome, before, notes)

    def _apart(self, case: Case, outcome: Outcome, before: CaseResult | None) -> tuple[str, ...]:
        """Why the baseline's result of ``case`` is not comparable with what it measured now
        (compare's rules: :func:`machine_apart`, run-wide, then :func:`not_comparable`): its
        relative gates are then not judged. The machine is the one this run's record will
        name (the first worker's device and BLAS)."""
        if before is None or self.baseline is None:
            return ()
        now = dataclasses.replace(
            bare(case, outcome.status, outcome.reason, "", 0.0),
            artifacts=outcome.artifacts,
            scenario_version=outcome.version,
        )
        identities = (
            self.baseline.models.get(before.model),
            self._identities.get(case.model.key),
        )
        run_wide = machine_apart(
            self.baseline.machine,
            self._machine.machine,
            allow_machine_change=self.allow_machine_change,
        )
        return (
            *run_wide,
            *not_comparable(before, now, identities, allow_model_change=self.allow_model_change),
        )

    def record_result(self, case: Case, result: CaseResult) -> CaseResult:
        """Record a result measured outside the workers (a pytest-benchmark test's timings)."""
        self._planned.setdefault(case.case_id, case)
        return self._record(case, result)

    def _record(self, case: Case, result: CaseResult) -> CaseResult:
        """Append ``result``; a result that cannot be serialized is recorded as errored."""
        try:
            with signals_deferred():
                self.writer.case(result)
        except (TypeError, ValueError) as exc:  # not JSON-serializable: our bug, not the case's
            log = self._log_traceback("recording the result", exc)
            line = HarnessFault("recording the result", exc, log).line
            result = errored(case, result.started_at, result.duration_s, line)
            with signals_deferred():
                self.writer.case(result)
        self._results[case.case_id] = result
        return result

    # -- ending ----------------------------------------------------------------------------
    def interrupt(self, stop: RunInterrupted) -> list[CaseResult]:
        """Stop now: kill the worker, record every unfinished planned case as interrupted."""
        self.stopped = stop
        self.kill_worker()
        marked = []
        with signals_deferred():
            for case_id, case in self._planned.items():
                if case_id in self._results or case_id in self.recorded:
                    continue
                result = interrupted(case, stop.reason)
                self.writer.case(result)
                self._results[case_id] = result
                marked.append(result)
            self.writer.interrupted(now(), stop.reason)
        return marked

    def finish(self) -> RunRecord:
        """Close workers, end the record and read it back (every case of the run, resumed
        ones included).

        After :meth:`interrupt` the record stays open for ``--resume`` (no ``run_end``).
        """
        if self.stopped is None:
            self.close_worker()
            with signals_deferred():
                self.writer.finish(now())
        else:
            self.kill_worker()
        self.writer.close()
        return load_run(self.run_dir)
