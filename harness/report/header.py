"""Header and summary: the run, the machine (BLAS included), package versions, status counts,
the harness's own overhead (time outside backend calls), and what the reader should know first:
an interrupted or incomplete run, a damaged record."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from harness.core.types import Machine, RunRecord
from harness.report.formatting import (
    STATUS_SYMBOLS,
    gib,
    status_css,
    status_order,
)
from harness.report.machine_state import busy_banner
from harness.report.overhead import overhead
from harness.report.sections import OPENING, Section
from harness.results.merge import merge_notes
from harness.spec.shard import shard_line


@dataclass(frozen=True)
class StatusCount:
    status: str
    symbol: str
    css: str
    count: int


@dataclass(frozen=True)
class Header:
    run_id: str
    started_at: str
    finished_at: str | None
    duration: str | None
    incomplete: bool
    total: int
    counts: tuple[StatusCount, ...]  # statuses that occur, passed first
    problems: int  # cases whose status is not ok (failed, errored, crashed, ...)
    git_sha: str | None
    run_rows: tuple[tuple[str, str], ...]
    machine_rows: tuple[tuple[str, str], ...]
    packages: tuple[tuple[str, str], ...]
    suites: tuple[tuple[str, str, str], ...]  # name, path, short sha256
    openblas: str  # "yes", "no" or "unknown"
    warnings: tuple[str, ...] = ()  # the suites' own: a selector that chose nothing, ...
    interrupted: str | None = None  # why the run was stopped (Ctrl-C, SIGTERM), if it was
    read_warnings: tuple[str, ...] = ()  # the record's: a cut last line skipped, ...
    runs: tuple[str, ...] = ()  # a shard's place in its plan; a merge's runs and machines
    busy: str | None = None  # cases measured on a dirty machine, and what their gates became


def _parse(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp)
    except ValueError:
        return None


def _duration(started: str, finished: str | None) -> str | None:
    start, end = _parse(started), _parse(finished)
    if start is None or end is None or (start.tzinfo is None) != (end.tzinfo is None):
        return None
    seconds = int((end - start).total_seconds())
    if seconds < 0:
        return None
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


def openblas_in_use(blas: str) -> str:
    """``yes``/``no``/``unknown``: whether the BLAS the run used is OpenBLAS."""
    text = blas.strip().lower()
    if not text or text == "unknown":
        return "unknown"
    return "yes" if "openblas" in text else "no"


def _machine_rows(machine: Machine, openblas: str) -> tuple[tuple[str, str], ...]:
    os_text = " ".join(p for p in (machine.os, machine.os_release) if p)
    return (
        ("CPU", machine.cpu or "unknown"),
        ("cores", str(machine.cores)),
        ("RAM", gib(machine.memory_bytes)),
        ("OS", f"{os_text} ({machine.arch})" if machine.arch else os_text),
        ("MLX device", machine.mlx_device),
        ("BLAS", f"{machine.blas} (OpenBLAS in use: {openblas})"),
        ("Python", machine.python),
        ("host", machine.hostname or "—"),
    )


def count_statuses(run: RunRecord) -> tuple[StatusCount, ...]:
    counts = Counter(r.status for r in run.results)
    ordered = sorted(counts, key=status_order)
    return tuple(StatusCount(s.value, STATUS_SYMBOLS[s], status_css(s), counts[s]) for s in ordered)


def build(run: RunRecord) -> Header:
    openblas = openblas_in_use(run.machine.blas)
    duration = _duration(run.started_at, run.finished_at)
    run_rows = [
        ("run id", run.run_id),
        ("started", run.started_at),
        (
            "finished",
            run.finished_at or ("— (interrupted)" if run.interrupted else "— (incomplete)"),
        ),
    ]
    if duration:
        run_rows.append(("duration", duration))
    run_rows.append(("git sha", run.git_sha[:12] if run.git_sha else "—"))
    if run.lock is not None:
        run_rows.append(("environment", run.lock.line()))
    run_rows.append(("suites", ", ".join(s.name for s in run.suites) or "—"))
    run_rows.append(("models", str(len({r.model for r in run.results} | set(run.models)))))
    spent = overhead(run)
    if spent is not None:
        run_rows.append(("harness overhead", spent.line()))
    return Header(
        run_id=run.run_id,
        started_at=run.started_at,
        finished_at=run.finished_at,
        duration=duration,
        incomplete=run.finished_at is None,
        total=len(run.results),
        counts=count_statuses(run),
        problems=sum(1 for r in run.results if not r.status.is_ok),
        git_sha=run.git_sha,
        run_rows=tuple(run_rows),
        machine_rows=_machine_rows(run.machine, openblas),
        packages=tuple(
            (name, version or "not installed") for name, version in sorted(run.packages.items())
        ),
        suites=tuple((s.name, s.path, s.sha256[:12]) for s in run.suites),
        openblas=openblas,
        warnings=tuple(dict.fromkeys(w for s in run.suites for w in s.warnings)),
        interrupted=run.interrupted,
        read_warnings=run.read_warnings,
        runs=_runs(run),
        busy=busy_banner(run),
    )


def _runs(run: RunRecord) -> tuple[str, ...]:
    """Where the cases come from: one shard of a plan, or the runs a merge joined."""
    if run.parts:
        return merge_notes(run)
    if run.shard is not None:
        models = len({r.model for r in run.results})
        return (shard_line(run.shard, len(run.results), models),)
    return ()


SECTION = Section("header", "Summary", build, order=OPENING)
