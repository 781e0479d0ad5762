"""A metric over many runs, with step changes found and attributed to what changed.

Runs are grouped per machine (a speed on one machine says nothing about another) and per model
identity (its files: a new revision or a 4-bit variant starts a series of its own, which names
what changed from the one before), ordered by start time. Steps come from a piecewise-constant
fit of the per-run medians in log space (dynamic programming, a penalty per extra segment, in
the spirit of asv's step detection); a step is reported when its size exceeds the minimum
effect. Each step names what changed between the two runs around it: package versions, model
files, project commit.
"""

from __future__ import annotations

import itertools
import math
import statistics
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.types import Machine, RunRecord
from harness.results.compare import machine_changes, model_changes, package_changes
from harness.results.report_dir import shown
from harness.results.store import RUN_FILE, RunFileError, RunReadWarning, load_run

LATEST = "latest"  # the reports folder's pointer to its newest run, not a run of its own


@dataclass(frozen=True)
class Point:
    run_id: str
    started_at: str
    median: float
    samples: tuple[float, ...]


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


def machine_key(machine: Machine) -> str:
    return (
        f"{machine.cpu} x{machine.cores}, {machine.memory_bytes / 2**30:.0f} GiB, "
        f"{machine.os} {machine.arch}, {machine.mlx_device}, {machine.blas}"
    )


def _record_files(path: Path) -> list[Path]:
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


def find_runs(paths: Iterable[Path]) -> list[RunRecord]:
    """Every readable run record under ``paths`` (files or directories, searched recursively).

    A record that cannot be read is skipped with a :class:`RunReadWarning` naming it and why;
    the same run found twice (the same run id and start time) counts once; runs that reuse an
    id (a nightly job's fixed ``--run-id``, each night in its own folder) all count.
    """
    runs: dict[tuple[str, str], RunRecord] = {}
    for path in paths:
        for file in _record_files(path):
            try:
                run = load_run(file)
            except RunFileError as exc:
                warnings.warn(f"{exc}; skipped this record", RunReadWarning, stacklevel=2)
                continue
            runs.setdefault((run.run_id, str(run.started_at)), run)
    return sorted(runs.values(), key=lambda r: r.started_at)


def fit_steps(values: Sequence[float], penalty: float) -> list[int]:
    """Segment starts of the least-squares piecewise-constant fit with ``penalty`` per segment."""
    n = len(values)
    if n == 0:
        return []
    prefix = [0.0]
    prefix_sq = [0.0]
    for v in values:
        prefix.append(prefix[-1] + v)
        prefix_sq.append(prefix_sq[-1] + v * v)

    def cost(i: int, j: int) -> float:  # squared error of values[i:j] around their mean
        s, sq, m = prefix[j] - prefix[i], prefix_sq[j] - prefix_sq[i], j - i
        return sq - s * s / m

    best = [0.0] + [math.inf] * n
    start = [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):
            candidate = best[i] + cost(i, j) + penalty
            if candidate < best[j]:
                best[j], start[j] = candidate, i
    starts: list[int] = []
    j = n
    while j > 0:
        starts.append(start[j])
        j = start[j]
    return sorted(starts)


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
    """One series per (machine, case) that has ``metric``, with fitted levels and steps."""
    grouped: dict[tuple[str, str, str], list[tuple[RunRecord, Point, str]]] = {}
    for run in runs:
        for result in run.results:
            if case_filter and case_filter not in result.case_id:
                continue
            found = result.metric(metric)
            if found is None or not found.samples or found.median <= 0:
                continue
            point = Point(run.run_id, run.started_at, found.median, found.samples)
            key = (machine_key(run.machine), result.case_id, identity_key(run, result.model))
            grouped.setdefault(key, []).append((run, point, result.model))
    out: list[Series] = []
    last: dict[tuple[str, str], tuple[RunRecord, str]] = {}  # the series before, per case
    for (machine, case_id, identity), entries in grouped.items():
        previous = last.get((machine, case_id))
        first_run, model = entries[0][0], entries[0][2]
        changed = (
            tuple(model_changes(previous[0], first_run, previous[1], model)) if previous else ()
        )
        last[(machine, case_id)] = (entries[-1][0], entries[-1][2])
        logs = [math.log(p.median) for _, p, _ in entries]
        noise = _noise(logs) if len(logs) >= 6 else _within_run_noise(entries)
        # a BIC-like price per extra level, never below what a min_effect step would buy
        penalty = max(
            3 * noise * noise * math.log(max(len(logs), 3)), math.log1p(min_effect) ** 2 / 2
        )
        starts = fit_steps(logs, penalty)
        levels = _levels(entries, starts)
        steps = []
        for s in starts[1:]:
            before, after = levels[s - 1], levels[s]
            change = (after - before) / before
            if abs(change) >= min_effect:
                steps.append(
                    Step(
                        s,
                        before,
                        after,
                        change,
                        _causes(entries[s - 1][0], entries[s][0], entries[s][2]),
                    )
                )
        out.append(
            Series(
                machine,
                case_id,
                metric,
                tuple(p for _, p, _ in entries),
                tuple(levels),
                tuple(steps),
                identity,
                changed,
            )
        )
    return out


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


def _noise(logs: Sequence[float]) -> float:
    """Robust run-to-run noise: median absolute successive difference / sqrt(2)."""
    diffs = [abs(b - a) for a, b in itertools.pairwise(logs)]
    return statistics.median(diffs) / math.sqrt(2) * 1.4826 if diffs else 0.0


def _within_run_noise(entries: Sequence[tuple[RunRecord, Point, str]]) -> float:
    """Noise of a run's median in log space, from the spread of its own samples."""
    spreads = []
    for _, point, _ in entries:
        logs = [math.log(v) for v in point.samples if v > 0]
        if len(logs) > 1:
            spreads.append(statistics.stdev(logs) / math.sqrt(len(logs)))
    return statistics.median(spreads) if spreads else 0.0


def _levels(entries: Sequence[tuple[RunRecord, Point, str]], starts: Sequence[int]) -> list[float]:
    bounds = [*starts, len(entries)]
    levels: list[float] = []
    for a, b in itertools.pairwise(bounds):
        level = statistics.median(p.median for _, p, _ in entries[a:b])
        levels.extend([level] * (b - a))
    return levels
