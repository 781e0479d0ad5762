"""One run: cases go to per-model workers, results are judged and appended as they land.

Before a case reaches a worker, the probe-and-policy step (:mod:`harness.runner.preflight`)
may skip it with its reason; its decision and memory estimate go into the case's record.

Both drivers (the pytest plugin and the CLI) use this; neither holds logic the other lacks.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import secrets
import shutil
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.codec import metric_from_json
from harness.identity import model_identity
from harness.probe.machine import MemoryBudget
from harness.runner.blas import planned_blas, worker_env
from harness.runner.client import WorkerClient, WorkerGone
from harness.runner.judge import judge
from harness.runner.machine import git_sha, machine, package_versions
from harness.runner.preflight import Preflight, Preflighter
from harness.spec.plan import worker_key
from harness.store import RUN_FILE, RunWriter, load_run
from harness.types import (
    Case,
    CaseResult,
    ExpectKind,
    GateResult,
    Metric,
    RunRecord,
    Status,
    SuiteInfo,
    Unit,
)


def new_run_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _memory_metrics(memory: dict[str, Any]) -> list[Metric]:
    views = (
        ("memory.mlx_peak_bytes", "mlx_peak_bytes", "MLX peak"),
        ("memory.mlx_active_bytes", "mlx_active_bytes", "MLX active"),
        (
            "memory.process_peak_rss_bytes",
            "process_peak_rss_bytes",
            f"process peak RSS ({memory.get('rss_view', '')})",
        ),
    )
    return [
        Metric(name, Unit.BYTES, (float(memory[key]),), view=view)
        for name, key, view in views
        if memory.get(key) is not None
    ]


@dataclass(frozen=True)
class Outcome:
    """What a worker made of one case, before gates and expectations are applied."""

    status: Status
    reason: str | None = None
    metrics: tuple[Metric, ...] = ()
    artifacts: dict[str, Any] = field(default_factory=dict)
    version: int = 1
    preflight: dict[str, Any] = field(default_factory=dict)  # Preflight.record(), {} if none


@dataclass
class _LiveModel:
    case: Case  # the first case that needed this worker; its model is the one loaded
    client: WorkerClient | None = None
    load_error: str | None = None
    device: str | None = None
    blas: str | None = None


class RunSession:
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
    ) -> None:
        """``memory_budget`` fixes the policy's memory budget; by default the machine's."""
        from harness.metrics import all_specs

        self.run_id = run_id or new_run_id()
        self.report_root = report_root
        self.run_dir = report_root / self.run_id
        self.env = worker_env(os.environ, offline=offline)
        self.specs = all_specs()
        self.writer = RunWriter(self.run_dir / RUN_FILE)
        self.writer.start(
            run_id=self.run_id,
            started_at=now(),
            machine=machine(planned_blas(self.env)),
            packages=package_versions(),
            git_sha=git_sha(project_root or Path.cwd()),
            suites=list(suites),
        )
        self.baseline = baseline
        self.comparison: Any = None  # harness.compare.Comparison once finished with a baseline
        self._baseline_cases = {r.case_id: r for r in baseline.results} if baseline else {}
        self._live: _LiveModel | None = None
        self._identities: set[str] = set()
        self._preflight = Preflighter(budget=memory_budget)
        self._probed: set[str] = set()

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

    def _ensure_loaded(self, live: _LiveModel, timeout_s: float) -> WorkerClient:
        if live.client is not None and live.client.proc.poll() is None:
            return live.client
        log = self.run_dir / "logs" / f"{live.case.model.key.replace('/', '_')}.log"
        client = WorkerClient(self.env, log)
        live.client = client
        reply = client.request(
            {"op": "load", "backend": live.case.model.backend, "path": live.case.model.path},
            timeout_s,
        )
        if reply.get("op") != "loaded":
            client.close()
            live.client = None
            live.load_error = f"load failed: {reply.get('error', reply)}"
            raise WorkerGone(live.load_error)
        live.device = reply["info"].get("device")
        live.blas = reply.get("blas")
        return client

    def _record_identity(self, case: Case, live: _LiveModel) -> None:
        if case.model.key not in self._identities:
            self._identities.add(case.model.key)
            self.writer.model(model_identity(case.model), device=live.device, blas=live.blas)

    def _check(self, case: Case) -> Preflight | None:
        """Probe (once per model, recorded) and policy for ``case``, before any load."""
        preflight = self._preflight.check(case)
        if case.model.key not in self._probed:
            probe = self._preflight.probe_record(case)
            if probe is not None:
                self._probed.add(case.model.key)
                self.writer.probe(case.model.key, probe)
        return preflight

    # -- cases -----------------------------------------------------------------------------
    def _execute(self, case: Case) -> Outcome:
        live = self._model(case)  # a switch of model stops the previous worker first
        preflight = self._check(case)
        if preflight is None:
            return self._run_in_worker(case, live)
        if preflight.blocked:  # no worker starts for it
            return Outcome(Status.SKIPPED, preflight.reason, preflight=preflight.record())
        outcome = self._run_in_worker(case, live)
        return dataclasses.replace(outcome, preflight=preflight.record())

    def _run_in_worker(self, case: Case, live: _LiveModel) -> Outcome:
        if live.load_error is not None:
            return Outcome(Status.ERRORED, live.load_error)
        try:
            client = self._ensure_loaded(live, case.timeout_s)
        except WorkerGone as exc:
            live.client = None
            if live.load_error is not None:  # the backend said no: same answer for every case
                return Outcome(Status.ERRORED, live.load_error)
            status = Status.TIMED_OUT if exc.timed_out else Status.CRASHED
            live.load_error = f"load {status.value}: {exc}"
            return Outcome(status, f"during load: {exc}")
        self._record_identity(case, live)
        request = {
            "op": "run",
            "scenario": case.scenario,
            "params": dict(case.params),
            "repeats": case.repeats,
            "warmup": case.warmup,
        }
        try:
            reply = client.request(request, case.timeout_s)
        except WorkerGone as exc:
            live.client = None  # the next case of this model starts a fresh worker
            return Outcome(Status.TIMED_OUT if exc.timed_out else Status.CRASHED, str(exc))
        if reply.get("op") == "crash":
            client.kill()
            live.client = None
            return Outcome(Status.CRASHED, reply.get("error"))
        if reply.get("op") != "result":
            return Outcome(Status.ERRORED, str(reply.get("error", reply)))
        metrics = [metric_from_json(m) for m in reply["metrics"]]
        metrics.extend(_memory_metrics(reply.get("memory") or {}))
        status, reason = Status.PASSED, None
        if reply.get("failures"):
            status, reason = Status.FAILED, "; ".join(reply["failures"])
        elif reply.get("skip_reason"):
            status, reason = Status.SKIPPED, str(reply["skip_reason"])
        return Outcome(
            status,
            reason,
            tuple(metrics),
            dict(reply.get("artifacts") or {}),
            int(reply.get("version", 1)),
        )

    def run_case(self, case: Case) -> CaseResult:
        started = now()
        start = time.perf_counter()
        expectation = case.expectation
        gates: tuple[GateResult, ...] = ()
        if expectation is not None and expectation.kind is ExpectKind.SKIP:
            outcome = Outcome(Status.SKIPPED, expectation.reason)
            status, reason = outcome.status, outcome.reason
        else:
            outcome = self._execute(case)
            before = self._baseline_cases.get(case.case_id)
            status, gates, reason = judge(
                case,
                outcome.status,
                outcome.metrics,
                outcome.reason,
                self.specs,
                baseline={m.name: m for m in before.metrics} if before else None,
            )
        result = CaseResult(
            case_id=case.case_id,
            suite=case.suite,
            model=case.model.key,
            scenario=case.scenario,
            status=status,
            params=dict(case.params),
            point=dict(case.point),
            metrics=outcome.metrics,
            reason=reason,
            gates=gates,
            artifacts=outcome.artifacts,
            duration_s=time.perf_counter() - start,
            started_at=started,
            scenario_version=outcome.version,
            link=expectation.link if expectation else None,
            preflight=outcome.preflight,
        )
        self.writer.case(result)
        return result

    def finish(self, *, render: bool = True) -> tuple[RunRecord, Path | None]:
        """Close workers, end the record, render reports; return the run and report.html."""
        self.close_worker()
        self.writer.finish(now())
        self.writer.close()
        run = load_run(self.run_dir)
        if self.baseline is not None:
            from harness.compare import compare_runs

            self.comparison = compare_runs(self.baseline, run, specs=self.specs)
        if not render:
            return run, None
        sections = None
        if self.comparison is not None:
            from harness.report import default_sections
            from harness.report.comparison import section

            defaults = default_sections()
            sections = (defaults[0], section(self.comparison), *defaults[1:])
        return run, render_reports(run, self.run_dir, self.report_root / "latest", sections)


def render_reports(
    run: RunRecord, run_dir: Path, latest: Path | None, sections: Sequence[Any] | None = None
) -> Path:
    from harness.report import render

    paths = render(run, run_dir, sections)
    if latest is not None:
        if latest.exists():
            shutil.rmtree(latest)
        latest.mkdir(parents=True)
        for name in (RUN_FILE, paths.md.name, paths.html.name):
            shutil.copy2(run_dir / name, latest / name)
        return latest / paths.html.name
    return paths.html
