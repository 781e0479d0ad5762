"""Joining run records into one (``mlx-harness merge``): shards of a plan run on several jobs.

The merged record keeps where every case ran: one :class:`RunPart` per joined run (its machine,
packages, commit, shard and case ids), written in the record's start. A case id in two runs is
refused, naming both, as are shards of different plans. Machines, package versions or commits
that differ between the runs are never hidden: :func:`merge_notes` says so in lines the report
and the terminal show, with the models each machine ran.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from harness.core.types import (
    CaseResult,
    JSONValue,
    LockCheck,
    Machine,
    ModelIdentity,
    RunPart,
    RunRecord,
    Shard,
    SuiteInfo,
)
from harness.results.comparability import MACHINE_FIELDS


class MergeError(ValueError):
    """Runs that cannot be joined; the message is one line naming them and the fix."""


@dataclasses.dataclass(frozen=True)
class Source:
    """A run to merge and how to name it in messages (the path it was read from)."""

    where: str
    run: RunRecord


def _parts(source: Source) -> tuple[RunPart, ...]:
    """The runs ``source`` holds: itself, or the parts of a record merged before."""
    run = source.run
    if run.parts:
        return run.parts
    return (
        RunPart(
            run_id=run.run_id,
            machine=run.machine,
            started_at=run.started_at,
            finished_at=run.finished_at,
            packages=dict(run.packages),
            git_sha=run.git_sha,
            shard=run.shard,
            cases=tuple(r.case_id for r in run.results),
        ),
    )


def _check_shards(sources: Sequence[Source]) -> None:
    """Shards must come from one plan (same N, same plan digest), each index once."""
    plan: tuple[str, RunPart, Shard] | None = None
    seen: dict[int, str] = {}
    for source in sources:
        for part in _parts(source):
            shard = part.shard
            if shard is None:
                continue
            if plan is None:
                plan = (source.where, part, shard)
            elif (shard.count, shard.plan_sha256) != (plan[2].count, plan[2].plan_sha256):
                raise MergeError(
                    f"{plan[0]} (shard {plan[2].label}) and {source.where} (shard "
                    f"{shard.label}) are shards of different plans; run every shard with the "
                    "same suites, -k and N"
                )
            if shard.index in seen:
                raise MergeError(
                    f"{seen[shard.index]} and {source.where} are both shard {shard.label}; "
                    "give each shard's run once"
                )
            seen[shard.index] = source.where


def _check_unique(sources: Sequence[Source]) -> None:
    runs: dict[str, str] = {}
    cases: dict[str, str] = {}
    for source in sources:
        for part in _parts(source):
            if part.run_id in runs:
                raise MergeError(
                    f"{runs[part.run_id]} and {source.where} hold the same run "
                    f"({part.run_id}); give each run once"
                )
            runs[part.run_id] = source.where
        for result in source.run.results:
            if result.case_id in cases:
                raise MergeError(
                    f"case {result.case_id} is in both {cases[result.case_id]} and "
                    f"{source.where}; a case may come from one run only (merge each shard once)"
                )
            cases[result.case_id] = source.where


def _versions(parts: Sequence[RunPart]) -> dict[str, list[str | None]]:
    """Each package's versions over the runs, each version once, in run order."""
    names = dict.fromkeys(n for p in parts for n in p.packages)
    return {n: list(dict.fromkeys(p.packages.get(n) for p in parts)) for n in names}


def _packages(parts: Sequence[RunPart]) -> dict[str, str | None]:
    """Versions all runs agree on; where they differ, each version once: ``0.31.0 | 0.31.3``."""
    return {
        name: versions[0]
        if len(versions) == 1
        else " | ".join(v or "not installed" for v in versions)
        for name, versions in _versions(parts).items()
    }


def merge_runs(sources: Sequence[Source], run_id: str) -> RunRecord:
    """One record holding every case of ``sources``, with each run's part; see the module."""
    if not sources:
        raise MergeError("nothing to merge; give the run folders (reports/<run-id>) to join")
    _check_unique(sources)
    _check_shards(sources)
    ordered = sorted(
        sources, key=lambda s: min((p.shard.index for p in _parts(s) if p.shard), default=0)
    )
    parts = tuple(p for s in ordered for p in _parts(s))
    finished = [p.finished_at for p in parts]
    suites: dict[tuple[str, str, str], SuiteInfo] = {}
    for source in ordered:
        for suite in source.run.suites:
            suites.setdefault((suite.name, suite.path, suite.sha256), suite)
    shas = list(dict.fromkeys(p.git_sha for p in parts))
    results: list[CaseResult] = [r for s in ordered for r in s.run.results]
    models: dict[str, ModelIdentity] = {}
    probes: dict[str, Mapping[str, JSONValue]] = {}
    for source in ordered:  # a model in two runs (not shards of one plan): the first's
        for key, identity in source.run.models.items():
            models.setdefault(key, identity)
        for key, probe in source.run.probes.items():
            probes.setdefault(key, probe)
    return RunRecord(
        schema_version=max(s.run.schema_version for s in ordered),
        run_id=run_id,
        started_at=min(p.started_at for p in parts),
        machine=parts[0].machine,
        packages=_packages(parts),
        git_sha=shas[0] if len(shas) == 1 else None,
        suites=tuple(suites.values()),
        models=models,
        results=tuple(results),
        finished_at=None if None in finished else max(f for f in finished if f),
        probes=probes,
        read_warnings=tuple(w for s in ordered for w in s.run.read_warnings),
        parts=parts,
        lock=_lock(ordered),
        selection=_selection(ordered),
    )


def machine_label(machine: Machine) -> str:
    """``host-a (Apple M2 Max x12, 64 GiB, Darwin arm64, gpu)``."""
    host = machine.hostname or "unnamed host"
    return (
        f"{host} ({machine.cpu or 'unknown CPU'} x{machine.cores}, "
        f"{machine.memory_bytes / 2**30:.0f} GiB, {machine.os} {machine.arch}, "
        f"{machine.mlx_device})"
    )


def _fingerprint(machine: Machine) -> tuple[object, ...]:
    return (machine.hostname, *(getattr(machine, name) for name in MACHINE_FIELDS))


def _run_list(parts: Sequence[RunPart]) -> str:
    return ", ".join(f"{p.run_id}{f' (shard {p.shard.label})' if p.shard else ''}" for p in parts)


def missing_shards(parts: Sequence[RunPart]) -> tuple[str, ...]:
    """``("2/3",)``: shards of the joined plan that no run holds."""
    shards = [p.shard for p in parts if p.shard is not None]
    if not shards:
        return ()
    present = {s.index for s in shards}
    count = shards[0].count  # one plan: merge_runs refuses shards of two
    return tuple(f"{i}/{count}" for i in range(1, count + 1) if i not in present)


def merge_notes(run: RunRecord) -> tuple[str, ...]:
    """What a reader of a merged record must know first, one line each: the runs joined,
    shards missing, runs unfinished, and the machines, packages and commits that differ."""
    parts = run.parts
    if not parts:
        return ()
    model_of = {r.case_id: r.model for r in run.results}
    notes = [f"merged from {len(parts)} runs: {_run_list(parts)}"]
    if missing := missing_shards(parts):
        notes.append(
            f"shards {', '.join(missing)} missing: their models' cases are not in this run"
        )
    unfinished = [p for p in parts if p.finished_at is None]
    if unfinished:
        notes.append(f"runs without a finish record (interrupted or cut): {_run_list(unfinished)}")
    machines: dict[tuple[object, ...], list[RunPart]] = {}
    for part in parts:
        machines.setdefault(_fingerprint(part.machine), []).append(part)
    if len(machines) > 1:
        notes.append(
            f"spans {len(machines)} machines: each case's timings are from one machine, "
            "but rows from different machines do not compare"
        )
        for group in machines.values():
            cases = [c for p in group for c in p.cases]
            models = sorted({model_of.get(c, "?") for c in cases})
            plural = "" if len(cases) == 1 else "s"
            notes.append(
                f"{machine_label(group[0].machine)}: {len(cases)} case{plural} "
                f"(models {', '.join(models) or 'none'}) from {_run_list(group)}"
            )
    for name, versions in _versions(parts).items():
        if len(versions) > 1:
            each = "; ".join(
                f"{p.packages.get(name) or 'not installed'} in {p.run_id}" for p in parts
            )
            notes.append(f"package {name} differs between runs: {each}")
    shas = list(dict.fromkeys(p.git_sha for p in parts))
    if len(shas) > 1:
        notes.append(
            "runs are from different commits: "
            + "; ".join(f"{(p.git_sha or 'unknown')[:12]} in {p.run_id}" for p in parts)
        )
    return tuple(notes)


def _lock(ordered: Sequence[Source]) -> LockCheck | None:
    """The parts' lock check when they all have the same one (the same environment); else
    None: a merged record cannot say one environment matched."""
    checks = {s.run.lock for s in ordered}
    return checks.pop() if len(checks) == 1 else None


def _selection(ordered: Sequence[Source]) -> tuple[str, ...]:
    """The parts' selection (``-k``, ``-m``) when they all made the same one; else none."""
    chosen = {s.run.selection for s in ordered}
    return chosen.pop() if len(chosen) == 1 else ()
