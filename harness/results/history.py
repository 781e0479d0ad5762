"""A metric over many runs, with step changes found and attributed to what changed.

Runs are grouped per machine (a speed on one machine says nothing about another) and per model
identity (its files: a new revision or a 4-bit variant starts a series of its own, which names
what changed from the one before), ordered by start time. Each run is read once and reduced at
once to per-(machine, identity, case, metric) points (:mod:`harness.results.digest`), kept in
compact columns: a 3-year nightly history is never in memory as records. Steps come from
:mod:`harness.results.change_points` over the per-run medians in log space, the points measured
on a dirty machine (:func:`harness.results.machine_flags.dirty_reasons`) shown but left out of
the fit. Each step names what changed between the clean runs around it: package versions,
model files, project commit, machine.
"""

from __future__ import annotations

import itertools
import math
import statistics
import warnings
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.types import Machine, RunRecord
from harness.results.change_points import robust_noise, steps
from harness.results.comparability import machine_changes, model_changes
from harness.results.compare import package_changes
from harness.results.digest import RunDigest, digest_record, digest_run
from harness.results.report_dir import shown
from harness.results.store import RUN_FILE, RunFileError, RunReadWarning

LATEST = "latest"  # the reports folder's pointer to its newest run, not a run of its own


@dataclass(frozen=True)
class Point:
    run_id: str
    started_at: str
    median: float
    low: float = math.nan  # the run's smallest and largest sample
    high: float = math.nan
    dirty: tuple[str, ...] = ()  # why the machine could not be trusted: shown, not fitted
    source: str = ""  # the run's record file; "" when not read from one


@dataclass(frozen=True)
class Step:
    index: int  # first point of the new level
    before: float
    after: float
    change: float  # relative
    causes: tuple[str, ...]


@dataclass(frozen=True)
class Series:
    machine: str
    case_id: str
    metric: str
    points: tuple[Point, ...]
    levels: tuple[float, ...]  # fitted level for each point
    steps: tuple[Step, ...]
    # the model's files in this series ("revision ef36790b4875, weights 513.2 MiB"); "" when
    # the runs recorded no identity, and how they differ from the series before of this case
    identity: str = ""
    changed_from_before: tuple[str, ...] = ()
    unit: str = ""
    model: str = ""


def machine_key(machine: Machine) -> str:
    return (
        f"{machine.cpu} x{machine.cores}, {machine.memory_bytes / 2**30:.0f} GiB, "
        f"{machine.os} {machine.arch}, {machine.mlx_device}, {machine.blas}"
    )


def record_files(path: Path) -> list[Path]:
    """``path`` itself, or every run.jsonl under it, leaving out ``latest`` (a link to, or a
    copy of, another run) and hidden folders (a report being swapped into place)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        warnings.warn(f"{shown(path)}: no such file or folder; skipped", RunReadWarning, 3)
        return []
    files = []
    for file in sorted(path.rglob(RUN_FILE)):
        parts = file.relative_to(path).parts[:-1]
        if any(p == LATEST or p.startswith(".") for p in parts):
            continue
        files.append(file)
    return files


def read_digests(
    paths: Iterable[Path], keep: Callable[[str], bool] = lambda _: True
) -> Iterator[RunDigest]:
    """Every readable record under ``paths``, each read once and reduced (the metrics ``keep``
    accepts), one at a time; an unreadable one is skipped with a :class:`RunReadWarning`."""
    for path in paths:
        for file in record_files(path):
            try:
                yield digest_run(file, keep)
            except RunFileError as exc:
                warnings.warn(f"{exc}; skipped this record", RunReadWarning, stacklevel=2)


@dataclass
class _Column:
    """One series' points as they arrive, compactly: run numbers and summaries in arrays."""

    model: str
    unit: str
    runs: array[int] = field(default_factory=lambda: array("l"))
    median: array[float] = field(default_factory=lambda: array("d"))
    low: array[float] = field(default_factory=lambda: array("d"))
    high: array[float] = field(default_factory=lambda: array("d"))
    spread: array[float] = field(default_factory=lambda: array("d"))
    dirty: dict[int, tuple[str, ...]] = field(default_factory=dict)  # position -> reasons


class Collector:
    """Runs reduced one at a time into per-(machine, case, identity, metric) columns."""

    def __init__(
        self, metric: str | None = None, case_filter: str | None = None, *, fit_dirty: bool = False
    ) -> None:
        """``fit_dirty``: fit the points measured on a dirty machine too
        (``--allow-dirty-machine``); they are still marked."""
        self._metric, self._case_filter = metric, case_filter
        self._fit_dirty = fit_dirty
        self._heads: list[RunRecord] = []
        self._sources: list[str] = []
        self._seen: set[tuple[str, str]] = set()
        self._columns: dict[tuple[str, str, str, str], _Column] = {}

    @property
    def runs(self) -> int:
        return len(self._heads)

    def add(self, digest: RunDigest) -> None:
        head = digest.head
        if (head.run_id, str(head.started_at)) in self._seen:
            return  # the same run found twice counts once
        self._seen.add((head.run_id, str(head.started_at)))
        number = len(self._heads)
        self._heads.append(head)
        self._sources.append(digest.source)
        machine = machine_key(head.machine)
        identities = {
            model: identity_key(head, model) for model in {s.model for s in digest.summaries}
        }
        for s in digest.summaries:
            if self._metric is not None and s.metric != self._metric:
                continue
            if self._case_filter and self._case_filter not in s.case_id:
                continue
            key = (machine, s.case_id, identities[s.model], s.metric)
            column = self._columns.get(key)
            if column is None:
                column = self._columns[key] = _Column(s.model, s.unit)
            if s.dirty:
                column.dirty[len(column.runs)] = s.dirty
            column.runs.append(number)
            column.median.append(s.median)
            column.low.append(s.low)
            column.high.append(s.high)
            column.spread.append(s.spread)

    def cases(self) -> dict[str, list[str]]:
        """Each machine's cases, in the order they were first seen."""
        found: dict[str, dict[str, None]] = {}
        for machine, case_id, _, _ in self._columns:
            found.setdefault(machine, {})[case_id] = None
        return {machine: list(cases) for machine, cases in found.items()}

    def series(
        self, min_effect: float = 0.05, only: tuple[str, str] | None = None
    ) -> Iterator[Series]:
        """Each series (of the ``only`` (machine, case) when given) in the order its first run
        started, with fitted levels and steps."""
        order = sorted(range(len(self._heads)), key=lambda i: (self._heads[i].started_at, i))
        rank = array("l", [0] * len(order))
        for position, number in enumerate(order):
            rank[number] = position
        keyed = []
        for key, column in self._columns.items():
            if only is not None and key[:2] != only:
                continue
            positions = sorted(range(len(column.runs)), key=lambda p: rank[column.runs[p]])
            keyed.append((rank[column.runs[positions[0]]], key, column, positions))
        keyed.sort(key=lambda k: k[0])
        last: dict[tuple[str, str, str], tuple[RunRecord, str]] = {}  # series before, per case
        for _, key, column, positions in keyed:
            machine, case_id, _, metric = key
            first = self._heads[column.runs[positions[0]]]
            previous = last.get((machine, case_id, metric))
            changed = (
                tuple(model_changes(previous[0], first, previous[1], column.model))
                if previous
                else ()
            )
            last[(machine, case_id, metric)] = (
                self._heads[column.runs[positions[-1]]],
                column.model,
            )
            yield self._fit(key, column, positions, changed, min_effect)

    def _fit(
        self,
        key: tuple[str, str, str, str],
        column: _Column,
        positions: Sequence[int],
        changed: tuple[str, ...],
        min_effect: float,
    ) -> Series:
        machine, case_id, identity, metric = key
        points = tuple(
            Point(
                self._heads[column.runs[p]].run_id,
                self._heads[column.runs[p]].started_at,
                column.median[p],
                column.low[p],
                column.high[p],
                column.dirty.get(p, ()),
                self._sources[column.runs[p]],
            )
            for p in positions
        )
        clean = [i for i, p in enumerate(points) if self._fit_dirty or not p.dirty]
        logs = [math.log(points[i].median) for i in clean]
        if len(logs) >= 6:
            noise = robust_noise(logs)
        else:
            spreads = [column.spread[positions[i]] for i in clean if column.spread[positions[i]]]
            noise = statistics.median(spreads) if spreads else 0.0
        starts = [clean[s] for s in steps(logs, noise, min_effect=min_effect)] if clean else []
        levels = _levels(points, clean, starts)
        found = []
        for s in starts[1:]:
            before_point = max(i for i in clean if i < s)
            before, after = levels[before_point], levels[s]
            causes = _causes(
                self._heads[column.runs[positions[before_point]]],
                self._heads[column.runs[positions[s]]],
                column.model,
            )
            found.append(Step(s, before, after, (after - before) / before, causes))
        return Series(
            machine,
            case_id,
            metric,
            points,
            tuple(levels),
            tuple(found),
            identity,
            changed,
            column.unit,
            column.model,
        )

    def metrics(self) -> list[tuple[str, str, int, int]]:
        """Every metric collected: (name, unit, runs, cases), by name."""
        seen: dict[str, tuple[str, set[int], set[str]]] = {}
        for (_, case_id, _, metric), column in self._columns.items():
            _, in_runs, in_cases = seen.setdefault(metric, (column.unit, set(), set()))
            in_runs.update(column.runs)
            in_cases.add(case_id)
        return [(n, u, len(r), len(c)) for n, (u, r, c) in sorted(seen.items())]


def _levels(points: Sequence[Point], clean: Sequence[int], starts: Sequence[int]) -> list[float]:
    """Each point's fitted level: the median of its segment's clean points; a flagged point
    takes the level of the segment it falls in."""
    if not starts:
        return [math.nan] * len(points)
    bounds = [*starts, len(points)]
    levels: list[float] = []
    for a, b in itertools.pairwise(bounds):
        level = statistics.median(points[i].median for i in clean if a <= i < b)
        levels.extend([level] * (b - a))
    return [levels[0]] * starts[0] + levels[: len(points) - starts[0]]


def _causes(before: RunRecord, after: RunRecord, model: str) -> tuple[str, ...]:
    causes = list(package_changes(before, after))
    if before.git_sha != after.git_sha:
        causes.append(f"project commit: {before.git_sha} -> {after.git_sha}")
    causes.extend(model_changes(before, after, model, model))
    causes.extend(machine_changes(before.machine, after.machine))
    return tuple(causes) or ("nothing recorded changed (noise or the environment)",)


def series(
    runs: Sequence[RunRecord],
    metric: str,
    *,
    case_filter: str | None = None,
    min_effect: float = 0.05,
) -> list[Series]:
    """One series per (machine, case, model identity) that has ``metric``, with fitted levels
    and steps, from runs already read."""
    collector = Collector(metric, case_filter)
    for run in runs:
        collector.add(digest_record(run, lambda name: name == metric))
    return list(collector.series(min_effect))


def identity_key(run: RunRecord, model: str) -> str:
    """The model's files as one label: ``revision ef36790b4875, config 0af2bb22dc48, weights
    513.2 MiB``; "" when the run recorded no identity for it."""
    identity = run.models.get(model)
    if identity is None:
        return ""
    parts = []
    if identity.revision:
        parts.append(f"revision {identity.revision[:12]}")
    if identity.config_sha256:
        parts.append(f"config {identity.config_sha256[:12]}")
    if identity.weights_bytes is not None:
        parts.append(f"weights {identity.weights_bytes / 2**20:.1f} MiB")
    if identity.chat_template_sha256:
        parts.append(f"template {identity.chat_template_sha256[:12]}")
    if identity.server:
        parts.append(f"server {identity.server}")
    return ", ".join([identity.backend, *parts])


def regression_in_effect(s: Series, higher_is_better: bool) -> Step | None:
    """The series' latest step when it made the metric worse and its level still holds at the
    last clean point (nearer the level after than before, in log space); else None."""
    if not s.steps:
        return None
    step = s.steps[-1]
    worse = step.change < 0 if higher_is_better else step.change > 0
    last = next((p for p in reversed(s.points) if not p.dirty), None)
    if not worse or last is None:
        return None
    at = math.log(last.median)
    nearer_after = abs(at - math.log(step.after)) <= abs(at - math.log(step.before))
    return step if nearer_after else None
