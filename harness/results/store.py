"""Run records on disk: an append-only JSONL file written case by case, and reading it back.

A run that dies keeps every case it finished: each event is one line, written with a single
``os.write`` on an ``O_APPEND`` descriptor and fsync'd as it lands. A write that fails (disk
full, I/O error) is cut back off, so the record never holds a torn line of ours.

Reading survives any bytes: what is not a run record is a :class:`RunFileError` naming the file
and line; a cut last line (a run killed mid-write) is skipped and reported in
``RunRecord.read_warnings`` and as a :class:`RunReadWarning`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.core.types import (
    CaseResult,
    LockCheck,
    Machine,
    ModelIdentity,
    PinSetInfo,
    RunPart,
    RunRecord,
    Shard,
    SuiteInfo,
)
from harness.results.codec import EVENT_TYPES, DecodeError, decode_event, to_json
from harness.results.migrations import RECORD_VERSION, migrated_event, newer_than_known
from harness.results.record_lines import BadLine, RecordLine, RecordLines, read_record_lines
from harness.results.report_dir import (
    ReportDirError,
    RunIdTaken,
    check_writable_dir,
    make_dir,
    os_error,
    shown,
)
from harness.results.sample_export import sample_fields

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "RUN_FILE",
    "SCHEMA_VERSION",
    "ReportDirError",
    "RunFileError",
    "RunIdTaken",
    "RunReadWarning",
    "RunWriter",
    "check_report_root",
    "export_csv",
    "load_run",
    "metrics_frame",
    "not_an_event",
    "read_record",
    "typed_event",
]

SCHEMA_VERSION = RECORD_VERSION  # the format every new record is written in
RUN_FILE = "run.jsonl"
CORRUPT = "the run record is corrupt; repair or delete that line, or restore the file from a copy"
NOT_A_RECORD = "pass a run folder (reports/<run-id>) or the run.jsonl mlx-harness wrote"


class RunFileError(Exception):
    """A run record that cannot be read; the message is one line naming the file and line."""


class RunReadWarning(UserWarning):
    """A run record read with a caveat (a cut last line skipped, a record skipped)."""


def check_report_root(root: Path) -> None:
    """Raise :class:`ReportDirError` (one line) unless runs can be written under ``root``.

    ``root`` must be a folder or creatable as one, and a file must really be creatable in it.
    """
    check_writable_dir(root)


class RunWriter:
    """Appends the events of one run to ``path``; each line is durable once written.

    A new run refuses a record that exists (a reused run id: :class:`RunIdTaken`);
    ``resume=True`` appends to it, after cutting off a torn last line left by a killed run.
    Every failure to write is a :class:`ReportDirError` with one line.

    ``sync_each=False`` (a record written whole from one already measured: merge, import,
    :func:`write_record`) syncs once, at :meth:`close`, not after every line: a live run's
    lines must survive a crash one by one, a copy's only as a whole (10,000 cases were 10,000
    ``fsync`` calls).
    """

    def __init__(self, path: Path, *, resume: bool = False, sync_each: bool = True) -> None:
        self.path = path
        self._sync_each = sync_each
        run_id, root = path.parent.name, path.parent.parent
        if resume and not path.is_file():
            raise ReportDirError(
                f"no run '{shown(run_id)}' to resume in {shown(root)}; "
                "check the run id (its folder holds run.jsonl)"
            )
        make_dir(path.parent)
        flags = os.O_APPEND | (os.O_RDWR if resume else os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        try:
            self._fd: int | None = os.open(path, flags, 0o644)
        except FileExistsError:
            raise RunIdTaken(
                f"run id '{shown(run_id)}' already exists in {shown(root)}; pass --resume "
                f"{shown(run_id)} to continue it or choose another --run-id"
            ) from None
        except OSError as exc:
            raise os_error(path, exc) from None
        if resume:
            self._cut_torn_tail()

    def _cut_torn_tail(self) -> None:
        """Drop a last line without its newline (readers skip it anyway) before appending."""
        assert self._fd is not None
        try:
            size = os.fstat(self._fd).st_size
            if size == 0 or os.pread(self._fd, 1, size - 1) == b"\n":
                return
            keep = size
            while keep > 0:  # back to just after the last newline
                start = max(0, keep - 65536)
                chunk = os.pread(self._fd, keep - start, start)
                cut = chunk.rfind(b"\n")
                if cut >= 0:
                    keep = start + cut + 1
                    break
                keep = start
            os.ftruncate(self._fd, keep)
        except OSError as exc:
            raise os_error(self.path, exc) from None

    def _write(self, event: Mapping[str, Any]) -> None:
        if self._fd is None:
            raise ValueError(f"{self.path}: the run record is closed")
        data = (json.dumps(to_json(event), sort_keys=True) + "\n").encode("utf-8")
        fd = self._fd
        try:
            before = os.fstat(fd).st_size
        except OSError as exc:
            raise os_error(self.path, exc) from None
        try:
            written = os.write(fd, data)  # one line, one write: all of it, in the common case
            while written < len(data):  # a short write: the next one says why, or finishes
                written += os.write(fd, data[written:])
            if self._sync_each:
                os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, before)  # no torn line of ours stays in the record
            raise os_error(self.path, exc) from None

    def start(
        self,
        *,
        run_id: str,
        started_at: str,
        machine: Machine,
        packages: Mapping[str, str | None],
        git_sha: str | None,
        suites: Iterable[SuiteInfo],
        shard: Shard | None = None,
        parts: Iterable[RunPart] = (),
        pin_set: PinSetInfo | None = None,
        lock: LockCheck | None = None,
        selection: Sequence[str] = (),
    ) -> None:
        """The record's first line; ``shard``, ``parts``, ``pin_set`` and ``lock`` are written
        only when set, so a plain run's record reads the same in older versions."""
        event: dict[str, Any] = {
            "event": "run_start",
            "schema_version": SCHEMA_VERSION,
            "run_id": run_id,
            "started_at": started_at,
            "machine": machine,
            "packages": dict(packages),
            "git_sha": git_sha,
            "suites": list(suites),
        }
        if shard is not None:
            event["shard"] = shard
        if parts := list(parts):
            event["parts"] = parts
        if pin_set is not None:
            event["pin_set"] = pin_set
        if lock is not None:
            event["lock"] = lock
        if selection:
            event["selection"] = list(selection)
        self._write(event)

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

    def interrupted(self, at: str, reason: str) -> None:
        """The run was stopped; its record stays open for ``--resume``."""
        self._write({"event": "run_interrupted", "at": at, "reason": reason})

    def resumed(self, at: str, packages: Mapping[str, str | None], git_sha: str | None) -> None:
        """The run was continued (``--resume``) with these package versions and commit."""
        self._write(
            {"event": "run_resume", "at": at, "packages": dict(packages), "git_sha": git_sha}
        )

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                if not self._sync_each:
                    os.fsync(fd)
            except OSError as exc:
                raise os_error(self.path, exc) from None
            finally:
                os.close(fd)


def _record_file(path: Path) -> Path:
    file = path / RUN_FILE if path.is_dir() else path
    if not file.exists():
        raise RunFileError(f"{shown(file)}: no such file; {NOT_A_RECORD}")
    if not file.is_file():
        raise RunFileError(f"{shown(file)}: not a regular file; {NOT_A_RECORD}")
    return file


def _typed(file: Path, line: RecordLine, kind: str, version: int) -> dict[str, Any]:
    """``line`` as a typed ``kind`` event; a case line of a record at an older ``version`` is
    brought to today's format first (:mod:`harness.results.migrations`)."""
    try:
        text = line.text
        if kind == "case" and version < RECORD_VERSION:
            text = json.dumps(migrated_event(line.value, version))
        return decode_event(kind, text)
    except RecursionError:
        nested = f"{kind} event: nested too deeply"
        raise RunFileError(f"{shown(file)}:{line.number}: {nested}; {CORRUPT}") from None
    except DecodeError as exc:
        raise RunFileError(f"{shown(file)}:{line.number}: {exc}; {CORRUPT}") from None


def _head(file: Path, lines: tuple[RecordLine, ...], torn: str | None) -> RecordLine:
    if not lines:
        what = "its only line is cut off" if torn else "it is empty"
        raise RunFileError(f"{shown(file)}: not a run record ({what}); {NOT_A_RECORD}")
    head = lines[0]
    if head.value.get("event") != "run_start":
        raise RunFileError(
            f"{shown(file)}:{head.number}: not a run record (first line is not a run_start "
            f"event); {NOT_A_RECORD}"
        )
    version = head.value.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RunFileError(
            f"{shown(file)}:{head.number}: run_start has no valid schema_version; {CORRUPT}"
        )
    newer = newer_than_known(version)
    if newer is not None:
        raise RunFileError(f"{shown(file)}:{head.number}: {newer}")
    return head


def _changes(before: Mapping[str, str | None], after: Mapping[str, str | None]) -> list[str]:
    names = sorted(set(before) | set(after))
    return [
        f"{n} {before.get(n)} -> {after.get(n)}" for n in names if before.get(n) != after.get(n)
    ]


def read_record(path: Path | str) -> tuple[Path, RecordLines, dict[str, Any]]:
    """The record file of ``path``, its lines (each parsed once) and its checked ``run_start``
    event: what every reader of a record starts from. Raises :class:`RunFileError`."""
    file = _record_file(Path(path))
    try:
        read = read_record_lines(file)
    except BadLine as exc:
        fix = NOT_A_RECORD if exc.number == 1 else CORRUPT
        raise RunFileError(f"{shown(file)}:{exc.number}: {exc.what}; {fix}") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise RunFileError(f"{shown(file)}: cannot read the run record ({reason})") from None
    head = _head(file, read.lines, read.torn)
    return file, read, _typed(file, head, "run_start", head.value["schema_version"])


def typed_event(file: Path, line: RecordLine, kind: str, *, version: int) -> dict[str, Any]:
    """``line`` checked against the shared types as a ``kind`` event of a record at
    ``version`` (its ``run_start``'s ``schema_version``), migrated to today's format; a
    :class:`RunFileError` (``file:line: what; fix``) when it is not one."""
    return _typed(file, line, kind, version)


def not_an_event(file: Path, line: RecordLine) -> RunFileError:
    """The error for a line without an event name."""
    return RunFileError(f"{shown(file)}:{line.number}: not an event (no 'event' name); {CORRUPT}")


@dataclass
class ModelEvents:
    """The models a record's ``model`` events name, and its machine as the workers observed
    it: the first event with a device (and the first with a BLAS) replaces the planned one,
    since what a worker saw mapped beats what was planned."""

    machine: Machine
    models: dict[str, ModelIdentity] = field(default_factory=dict)
    _device_seen: bool = False
    _blas_seen: bool = False

    def add(self, event: Mapping[str, Any]) -> None:
        identity: ModelIdentity = event["identity"]
        self.models[identity.key] = identity
        if event.get("device") and not self._device_seen:
            self._device_seen = True
            self.machine = dataclasses.replace(self.machine, mlx_device=event["device"])
        if event.get("blas") and not self._blas_seen:
            self._blas_seen = True
            self.machine = dataclasses.replace(self.machine, blas=event["blas"])


def load_run(path: Path | str) -> RunRecord:
    """Read a run record (a ``run.jsonl`` file or a directory holding one; a path or a str).

    Every line is checked against the shared types; anything wrong is a :class:`RunFileError`
    (``file:line: what; fix``). A case recorded twice (a resumed run re-ran it) keeps its last
    result, in the order the cases first appeared. Events of an unknown kind are skipped.
    """
    file, read, head = read_record(path)
    version = head["schema_version"]
    notes = [f"{shown(file)}:{read.torn}"] if read.torn else []
    seen = ModelEvents(head["machine"])
    packages = dict(head.get("packages") or {})
    probes: dict[str, dict[str, Any]] = {}
    results: dict[str, CaseResult] = {}  # a resumed run's re-run of a case replaces it
    finished_at: str | None = None
    interrupted: str | None = None
    for line in read.lines[1:]:
        kind = line.value.get("event")
        if not isinstance(kind, str):
            raise not_an_event(file, line)
        if kind not in EVENT_TYPES or kind == "run_start":
            continue  # written by a newer harness (or a second start): nothing we read
        event = _typed(file, line, kind, version)
        if kind == "model":
            seen.add(event)
        elif kind == "probe":
            probes[event["model"]] = dict(event.get("probe") or {})
        elif kind == "case":
            result: CaseResult = event["result"]
            results[result.case_id] = result
        elif kind == "run_end":
            finished_at, interrupted = event.get("finished_at"), None
        elif kind == "run_interrupted":
            interrupted, finished_at = event["reason"], None
        elif kind == "run_resume":
            finished_at = None
            changed = _changes(packages, event.get("packages") or {})
            if changed:
                notes.append(
                    f"{shown(file)}:{line.number}: resumed with other packages "
                    f"({', '.join(changed)}); cases before and after may not compare"
                )
    for note in notes:
        warnings.warn(note, RunReadWarning, stacklevel=2)
    return RunRecord(
        schema_version=RECORD_VERSION,  # migrated as it loaded
        run_id=head["run_id"],
        started_at=head["started_at"],
        machine=seen.machine,
        packages=packages,
        git_sha=head.get("git_sha"),
        suites=tuple(head.get("suites") or ()),
        models=seen.models,
        results=tuple(results.values()),
        finished_at=finished_at,
        interrupted=interrupted,
        probes=probes,
        read_warnings=tuple(notes),
        shard=head.get("shard"),
        parts=tuple(head.get("parts") or ()),
        pin_set=head.get("pin_set"),
        lock=head.get("lock"),
        selection=tuple(head.get("selection") or ()),
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
        rows.extend({**base, **fields} for fields in sample_fields(result, "sample"))
    return pd.DataFrame(rows)


def export_csv(run: RunRecord, out: Path) -> Path:
    """Write the raw samples of ``run`` as CSV and return the path."""
    metrics_frame(run).to_csv(out, index=False)
    return out


def write_record(run: RunRecord, run_dir: Path) -> RunRecord:
    """Write ``run`` as a run writes ``run_dir/run.jsonl`` (refusing one that exists: the
    writer's rule), every part of it, and read it back as every reader does."""
    writer = RunWriter(run_dir / RUN_FILE, sync_each=False)
    try:
        writer.start(
            run_id=run.run_id,
            started_at=run.started_at,
            machine=run.machine,
            packages=run.packages,
            git_sha=run.git_sha,
            suites=run.suites,
            shard=run.shard,
            parts=run.parts,
            pin_set=run.pin_set,
            lock=run.lock,
            selection=run.selection,
        )
        for key, probe in run.probes.items():
            writer.probe(key, probe)
        for identity in run.models.values():
            writer.model(identity)
        for result in run.results:
            writer.case(result)
        if run.finished_at is not None:
            writer.finish(run.finished_at)
    finally:
        writer.close()
    return load_run(run_dir)
