"""A run record reduced to what history follows: read once, kept small.

:func:`digest_run` reads a record's lines once (each parsed once, by the same bounded parser
every reader uses) and keeps only the run's head (id, start, machine, packages, commit, model
identities: what a step is attributed to) and, per case and metric, a :class:`Summary` of its
samples (median, min..max, the spread of the median in log space, sample count) with the
case's dirty-machine reasons (:func:`harness.results.machine_flags.dirty_reasons`). A whole
``RunRecord`` is never built for a case: the case lines, the bulk of a record, are read by hand
for the few fields used. The head and the other (few, small) events are checked against the
shared types as :func:`harness.results.store.load_run` checks them, and a case line that fails
a hand check is checked the same way, so a damaged record fails with the same one-line
:class:`~harness.results.store.RunFileError`. Fields history never reads (a case's params,
artifacts other than the machine state) are not checked.

A :class:`RunDigest` turns into plain JSON and back (:func:`to_plain`, :func:`from_plain`) for
the site's index of runs already read (:mod:`harness.results.history_index`).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from harness.core.types import CaseResult, Machine, ModelIdentity, RunRecord, Status, Unit
from harness.results.codec import EVENT_TYPES
from harness.results.machine_flags import dirty_reasons
from harness.results.migrations import RECORD_VERSION, migrated_event
from harness.results.record_lines import RecordLine
from harness.results.report_dir import shown
from harness.results.store import (
    ModelEvents,
    RunReadWarning,
    not_an_event,
    read_record,
    typed_event,
)

_STATUSES = frozenset(s.value for s in Status)
_UNITS = frozenset(u.value for u in Unit)
_IDENTITY_FIELDS = tuple(f.name for f in dataclasses.fields(ModelIdentity))
_MACHINE_FIELDS = tuple(f.name for f in dataclasses.fields(Machine))


@dataclass(frozen=True, slots=True)
class Summary:
    """One metric of one case in one run: its samples, summarised (values in the metric's
    unit; ``spread``: the standard error of the median's log, 0 for one sample)."""

    case_id: str
    model: str
    metric: str
    unit: str
    median: float
    low: float  # the smallest sample
    high: float  # the largest sample
    spread: float
    count: int
    dirty: tuple[str, ...] = ()  # why the machine could not be trusted; empty: it could


@dataclass(frozen=True)
class RunDigest:
    head: RunRecord  # the run without its results: what a step is attributed to
    summaries: tuple[Summary, ...]
    source: str = ""  # the record file it was read from; "" when not read from one


def summarise(
    case_id: str,
    model: str,
    metric: str,
    unit: str,
    samples: tuple[float, ...],
    dirty: tuple[str, ...],
) -> Summary | None:
    """``samples`` as a :class:`Summary`; None when there are none, or the median is not
    positive (nothing to follow in log space)."""
    if not samples:
        return None
    median = statistics.median(samples)
    if not median > 0:
        return None
    return Summary(
        case_id,
        model,
        metric,
        unit,
        median,
        min(samples),
        max(samples),
        _log_spread(samples),
        len(samples),
        dirty,
    )


def _log_spread(samples: tuple[float, ...]) -> float:
    """The standard error of the samples' mean log (floats, not ``statistics.stdev``'s exact
    fractions: this runs for every metric of every case of every night)."""
    logs = [math.log(v) for v in samples if v > 0]
    k = len(logs)
    if k < 2:
        return 0.0
    mean = math.fsum(logs) / k
    return math.sqrt(math.fsum((v - mean) ** 2 for v in logs) / (k - 1) / k)


def summaries_of(result: CaseResult, keep: Callable[[str], bool]) -> list[Summary]:
    """Every kept metric of ``result``, summarised."""
    dirty = dirty_reasons(result)
    found = (
        summarise(result.case_id, result.model, m.name, m.unit.value, m.samples, dirty)
        for m in result.metrics
        if keep(m.name)
    )
    return [s for s in found if s is not None]


def digest_record(run: RunRecord, keep: Callable[[str], bool] = lambda _: True) -> RunDigest:
    """A run already read, reduced the same way."""
    summaries = [s for result in run.results for s in summaries_of(result, keep)]
    return RunDigest(dataclasses.replace(run, results=()), tuple(summaries))


def _text(value: object) -> TypeGuard[str]:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")  # a lone surrogate: the typed check refuses it, so do we
    except UnicodeEncodeError:
        return False
    return True


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _case_by_hand(value: Mapping[str, Any], keep: Callable[[str], bool]) -> list[Summary] | None:
    """The kept metrics of a case line read by hand; None when a field read is not as the
    shared types say (the caller then checks the whole line, for the one-line error)."""
    result = value.get("result")
    if not isinstance(result, dict):
        return None
    case_id, model = result.get("case_id"), result.get("model")
    if not (_text(case_id) and _text(model) and _text(result.get("suite"))):
        return None
    if not (_text(result.get("scenario")) and result.get("status") in _STATUSES):
        return None
    artifacts = result.get("artifacts", {})
    metrics = result.get("metrics", [])
    if not isinstance(artifacts, dict) or not isinstance(metrics, list):
        return None
    probe = CaseResult(case_id, "", model, "", Status.PASSED, artifacts=artifacts)
    dirty = dirty_reasons(probe)
    out: list[Summary] = []
    for metric in metrics:
        if not isinstance(metric, dict):
            return None
        name, unit, samples = metric.get("name"), metric.get("unit"), metric.get("samples")
        if not (_text(name) and unit in _UNITS and isinstance(samples, list)):
            return None
        if keep(name):  # the samples of a metric not followed are not read, nor checked
            if not all(_number(v) for v in samples):
                return None
            found = summarise(case_id, model, name, unit, tuple(map(float, samples)), dirty)
            if found is not None:
                out.append(found)
    return out


def digest_run(path: Path | str, keep: Callable[[str], bool] = lambda _: True) -> RunDigest:
    """Read the record at ``path`` once, keeping the metrics ``keep`` accepts by name.

    The same rules as :func:`harness.results.store.load_run`: a case recorded twice keeps its
    last result; the first model event's observed device and BLAS replace the planned ones;
    unknown events are skipped. Raises :class:`~harness.results.store.RunFileError`.
    """
    file, read, head = read_record(path)
    seen = ModelEvents(head["machine"])
    cases: dict[str, list[Summary]] = {}
    for line in read.lines[1:]:
        kind = line.value.get("event")
        if not isinstance(kind, str):
            raise not_an_event(file, line)
        if kind not in EVENT_TYPES or kind == "run_start":
            continue
        if kind == "case":
            cases.update(_case(file, line, keep, head["schema_version"]))
            continue
        event = typed_event(file, line, kind, version=head["schema_version"])  # few, small
        if kind == "model":
            seen.add(event)
    notes = (f"{shown(file)}:{read.torn}",) if read.torn else ()
    for note in notes:
        warnings.warn(note, RunReadWarning, stacklevel=2)
    run = RunRecord(
        schema_version=RECORD_VERSION,  # its cases migrated as they were read
        run_id=head["run_id"],
        started_at=head["started_at"],
        machine=seen.machine,
        packages=dict(head.get("packages") or {}),
        git_sha=head.get("git_sha"),
        models=seen.models,
        read_warnings=notes,
    )
    return RunDigest(run, tuple(s for found in cases.values() for s in found), str(file))


def _case(
    file: Path, line: RecordLine, keep: Callable[[str], bool], version: int
) -> dict[str, list[Summary]]:
    found = _case_by_hand(migrated_event(line.value, version), keep)
    if found is not None:
        return {line.value["result"]["case_id"]: found}
    # raises, with the line
    result: CaseResult = typed_event(file, line, "case", version=version)["result"]
    return {result.case_id: summaries_of(result, keep)}


def to_plain(digest: RunDigest) -> dict[str, Any]:
    """``digest`` as plain JSON values (for the site's index)."""
    head = digest.head
    return {
        "run_id": head.run_id,
        "started_at": head.started_at,
        "machine": dataclasses.asdict(head.machine),
        "packages": dict(head.packages),
        "git_sha": head.git_sha,
        "models": {
            key: {**dataclasses.asdict(m), "server_models": list(m.server_models)}
            for key, m in head.models.items()
        },
        "source": digest.source,
        "summaries": [
            [
                s.case_id,
                s.model,
                s.metric,
                s.unit,
                s.median,
                s.low,
                s.high,
                s.spread,
                s.count,
                list(s.dirty),
            ]
            for s in digest.summaries
        ],
    }


def from_plain(data: Mapping[str, Any]) -> RunDigest:
    """A digest back from :func:`to_plain`'s JSON; ``KeyError``/``TypeError``/``ValueError``
    when it is not one (the index is then rebuilt from the records)."""
    machine = Machine(**{k: data["machine"][k] for k in _MACHINE_FIELDS if k in data["machine"]})
    models = {}
    for key, m in data["models"].items():
        fields: dict[str, Any] = {k: m[k] for k in _IDENTITY_FIELDS if k in m}
        fields["server_models"] = tuple(fields.get("server_models", ()))
        models[key] = ModelIdentity(**fields)
    head = RunRecord(
        RECORD_VERSION,
        str(data["run_id"]),
        str(data["started_at"]),
        machine,
        dict(data["packages"]),
        data["git_sha"],
        models=models,
    )
    summaries = tuple(
        Summary(c, m, n, u, float(med), float(lo), float(hi), float(sp), int(k), tuple(d))
        for c, m, n, u, med, lo, hi, sp, k, d in data["summaries"]
    )
    return RunDigest(head, summaries, str(data.get("source", "")))
