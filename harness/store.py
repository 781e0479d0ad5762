"""Run records on disk: an append-only JSONL file written case by case, and reading it back.

A run that dies keeps every case it finished: each result is flushed and fsync'd as it lands.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from harness.codec import (
    case_result_from_json,
    identity_from_json,
    machine_from_json,
    suite_info_from_json,
    to_json,
)
from harness.types import CaseResult, Machine, ModelIdentity, RunRecord, SuiteInfo

if TYPE_CHECKING:
    import pandas as pd

SCHEMA_VERSION = 1
RUN_FILE = "run.jsonl"


class RunFileError(Exception):
    """A run record that cannot be read; the message is one line naming the file and line."""


class RunWriter:
    """Appends the events of one run to ``path``; each line is durable once written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = path.open("a", encoding="utf-8")

    def _write(self, event: Mapping[str, Any]) -> None:
        self._fh.write(json.dumps(to_json(event), sort_keys=True) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def start(
        self,
        *,
        run_id: str,
        started_at: str,
        machine: Machine,
        packages: Mapping[str, str | None],
        git_sha: str | None,
        suites: Iterable[SuiteInfo],
    ) -> None:
        self._write(
            {
                "event": "run_start",
                "schema_version": SCHEMA_VERSION,
                "run_id": run_id,
                "started_at": started_at,
                "machine": machine,
                "packages": dict(packages),
                "git_sha": git_sha,
                "suites": list(suites),
            }
        )

    def model(
        self, identity: ModelIdentity, *, device: str | None = None, blas: str | None = None
    ) -> None:
        """A model loaded; ``device`` and ``blas`` are what its worker observed."""
        self._write({"event": "model", "identity": identity, "device": device, "blas": blas})

    def probe(self, model: str, probe: Mapping[str, Any]) -> None:
        """What the probe read from a model's files before it loaded (once per model)."""
        self._write({"event": "probe", "model": model, "probe": dict(probe)})

    def case(self, result: CaseResult) -> None:
        self._write({"event": "case", "result": result})

    def finish(self, finished_at: str) -> None:
        self._write({"event": "run_end", "finished_at": finished_at})

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()


def _read_events(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise RunFileError(f"{path}: cannot read run record ({exc.strerror})") from None
    events: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            events.append(json.loads(line))
        except ValueError:
            if number == len(lines):  # a run killed mid-write leaves a partial last line
                break
            raise RunFileError(
                f"{path}:{number}: not a JSON line; the run record is corrupt"
            ) from None
    return events


def load_run(path: Path) -> RunRecord:
    """Read a run record (a ``run.jsonl`` file or a directory holding one)."""
    if path.is_dir():
        path = path / RUN_FILE
    events = _read_events(path)
    if not events or events[0].get("event") != "run_start":
        raise RunFileError(f"{path}:1: not a run record (first line is not a run_start event)")
    head = events[0]
    version = head.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise RunFileError(
            f"{path}:1: schema_version {version!r} is newer than this harness reads "
            f"({SCHEMA_VERSION}); upgrade mlx-harness"
        )
    machine = machine_from_json(head["machine"])
    models: dict[str, ModelIdentity] = {}
    probes: dict[str, dict[str, Any]] = {}
    results: list[CaseResult] = []
    finished_at: str | None = None
    observed_device = observed_blas = False
    for event in events[1:]:
        kind = event.get("event")
        if kind == "model":
            identity = identity_from_json(event["identity"])
            models[identity.key] = identity
            if event.get("device") and not observed_device:
                observed_device = True
                machine = dataclasses.replace(machine, mlx_device=event["device"])
            if event.get("blas") and not observed_blas:
                observed_blas = True  # what a worker saw mapped beats what was planned
                machine = dataclasses.replace(machine, blas=event["blas"])
        elif kind == "probe":
            probes[str(event["model"])] = dict(event.get("probe") or {})
        elif kind == "case":
            results.append(case_result_from_json(event["result"]))
        elif kind == "run_end":
            finished_at = event.get("finished_at")
    return RunRecord(
        schema_version=version,
        run_id=head["run_id"],
        started_at=head["started_at"],
        machine=machine,
        packages=dict(head.get("packages", {})),
        git_sha=head.get("git_sha"),
        suites=tuple(suite_info_from_json(s) for s in head.get("suites", ())),
        models=models,
        results=tuple(results),
        finished_at=finished_at,
        probes=probes,
    )


def metrics_frame(run: RunRecord) -> pd.DataFrame:
    """One row per (case, metric, sample): the raw measurements as a pandas DataFrame."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for result in run.results:
        base = {
            "run_id": run.run_id,
            "case_id": result.case_id,
            "suite": result.suite,
            "model": result.model,
            "scenario": result.scenario,
            "status": result.status.value,
            **{f"param.{k}": v for k, v in result.point.items()},
        }
        for metric in result.metrics:
            for warmup, samples in ((True, metric.warmup_samples), (False, metric.samples)):
                for index, value in enumerate(samples):
                    rows.append(
                        {
                            **base,
                            "metric": metric.name,
                            "unit": metric.unit.value,
                            "view": metric.view,
                            "warmup": warmup,
                            "sample": index,
                            "value": value,
                        }
                    )
    return pd.DataFrame(rows)


def export_csv(run: RunRecord, out: Path) -> Path:
    """Write the raw samples of ``run`` as CSV and return the path."""
    metrics_frame(run).to_csv(out, index=False)
    return out
