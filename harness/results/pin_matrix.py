"""Models x scenarios x pin sets: one column per run (a pin set's run, in the order given), a
row per case, and between adjacent columns the change judged by the rules of ``compare``
(regressed / improved / inconclusive / unchanged / newly failing / fixed / not comparable).

Returns data; never formats. Each column states its denominator (models, cases, passed), so a
cell is never read without knowing what it counts. A case's named checks (``CaseResult.checks``)
whose verdict differs between pin sets get a row each under the case (:class:`PinCheckRow`),
with the change between adjacent pin sets (:mod:`harness.results.check_changes`): a check
that fails under one release and passes under another shows even when the case failed under
both.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from harness.core.check_types import CheckVerdict
from harness.core.types import (
    CaseResult,
    JSONValue,
    PinSetInfo,
    RunRecord,
    Status,
    Unit,
    Verdict,
)
from harness.results.check_changes import CheckChange
from harness.results.compare import CaseDelta, MetricDelta, Thresholds, compare_runs

KEY_METRICS_PER_CASE = 2  # the first metrics a scenario records are its headline ones
# the packages a column names first (the stack under test); the rest follow when they differ
STACK = ("mlx", "mlx-metal", "mlx-cpu", "mlx-lm", "mlx-vlm", "mlx-audio", "transformers")


class PinMatrixError(ValueError):
    """Runs that cannot form one pin-set comparison (none, or the same column twice); one line."""


@dataclass(frozen=True)
class KeyMetric:
    name: str
    unit: Unit
    median: float
    n: int


@dataclass(frozen=True)
class PinColumn:
    """One run: its pin set (or run id), the versions it resolved, and what it counts."""

    label: str
    run_id: str
    pins: tuple[str, ...]
    stack: tuple[tuple[str, str | None], ...]  # (package, version) of the stack under test
    models: int
    cases: int
    statuses: Mapping[Status, int]
    machine: str
    environment_s: float | None = None
    environment_cold: bool | None = None
    installer: str | None = None  # what built the environment (uv, pip)
    run_s: float | None = None  # wall time of the run itself (first start to last finish)
    track: str | None = None  # what the pin set follows: "lock", "latest"; None: its pins
    lock: str | None = None  # its environment against the harness's uv.lock, one line

    @property
    def passed(self) -> int:
        return self.statuses.get(Status.PASSED, 0) + self.statuses.get(Status.XPASSED, 0)


@dataclass(frozen=True)
class PinCell:
    status: Status
    reason: str | None
    metrics: tuple[KeyMetric, ...] = ()


@dataclass(frozen=True)
class PinStep:
    """The change from the column before to this one, for one case."""

    verdict: Verdict
    note: str = ""  # the deciding metric or reason, one line
    metrics: tuple[MetricDelta, ...] = ()


@dataclass(frozen=True)
class PinCheckRow:
    """One named check of a case whose verdict is not the same under every pin set."""

    check: str
    cells: tuple[CheckVerdict | None, ...]  # one per column; None: not recorded in that run
    steps: tuple[CheckChange | None, ...]  # one per adjacent pair; None: no change there


@dataclass(frozen=True)
class PinRow:
    case_id: str
    model: str
    scenario: str
    point: Mapping[str, JSONValue]
    cells: tuple[PinCell | None, ...]  # one per column; None: not in that run
    steps: tuple[PinStep | None, ...]  # one per adjacent pair; None: not in both runs
    # the case's named checks whose verdict differs between pin sets, in the case's order:
    # visible even where the case failed under both
    checks: tuple[PinCheckRow, ...] = ()


@dataclass(frozen=True)
class PinTransition:
    """Adjacent columns: what changed in the packages and how many cases each verdict has."""

    before: str
    after: str
    package_changes: tuple[str, ...]
    machine_changes: tuple[str, ...]
    verdicts: Mapping[Verdict, int]
    compared: int  # cases present in both runs
    # changed named checks per verdict (newly failing, fixed, ...), over its cases
    check_verdicts: Mapping[Verdict, int] = field(default_factory=dict)
    # the two runs took turns (timings measured side by side, a round at a time); False: one
    # ran after the other, so a timing verdict is exposed to the machine's drift between them
    side_by_side: bool = False


@dataclass(frozen=True)
class PinMatrix:
    columns: tuple[PinColumn, ...]
    rows: tuple[PinRow, ...]
    transitions: tuple[PinTransition, ...] = field(default_factory=tuple)


def _seconds_between(start: str | None, end: str | None) -> float | None:
    import datetime as dt

    if not start or not end:
        return None
    try:
        return (dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(start)).total_seconds()
    except ValueError:
        return None


def _norm(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


def _stack(run: RunRecord) -> tuple[tuple[str, str | None], ...]:
    packages = {_norm(k): v for k, v in run.packages.items()}
    if run.pin_set is not None:
        packages.update({_norm(k): v for k, v in run.pin_set.resolved.items()})
    return tuple((name, packages.get(name)) for name in STACK if packages.get(name) is not None)


def _pins(pin_set: PinSetInfo | None) -> tuple[str, ...]:
    """Its pins, then those chosen for its mlx-lm marked so: ``mlx==0.31.0 (chosen)``."""
    if pin_set is None:
        return ()
    return (*pin_set.pins, *(f"{line.split(' ', 1)[0]} (chosen)" for line in pin_set.chosen))


def column_of(run: RunRecord) -> PinColumn:
    from harness.results.merge import machine_label

    pin_set = run.pin_set
    return PinColumn(
        label=pin_set.name if pin_set is not None else run.run_id,
        run_id=run.run_id,
        pins=_pins(pin_set),
        stack=_stack(run),
        models=len({r.model for r in run.results}),
        cases=len(run.results),
        statuses=Counter(r.status for r in run.results),
        machine=machine_label(run.machine),
        environment_s=pin_set.environment_s if pin_set is not None else None,
        environment_cold=pin_set.environment_cold if pin_set is not None else None,
        installer=pin_set.installer if pin_set is not None else None,
        run_s=_seconds_between(run.started_at, run.finished_at),
        track=pin_set.track if pin_set is not None else None,
        lock=run.lock.line() if run.lock is not None else None,
    )


def took_turns(before: RunRecord, after: RunRecord) -> bool:
    """Whether the two pin sets' runs took turns with each other (each names the other)."""
    a, b = before.pin_set, after.pin_set
    if a is None or b is None:
        return False
    return a.name in b.interleaved_with and b.name in a.interleaved_with


def key_metrics(result: CaseResult, wanted: Sequence[str] = ()) -> tuple[KeyMetric, ...]:
    """The metrics a cell shows: those named in ``wanted`` the case has, else its first ones."""
    chosen = (
        [m for name in wanted if (m := result.metric(name)) is not None]
        if wanted
        else list(result.metrics[:KEY_METRICS_PER_CASE])
    )
    out = []
    for metric in chosen:
        values = [v for v in metric.samples if math.isfinite(v)]
        if values:
            out.append(KeyMetric(metric.name, metric.unit, statistics.median(values), len(values)))
    return tuple(out)


def _cell(result: CaseResult | None, wanted: Sequence[str]) -> PinCell | None:
    if result is None:
        return None
    return PinCell(result.status, result.reason, key_metrics(result, wanted))


def _deciding(delta: CaseDelta) -> str:
    """One line: the metric that decided the case's verdict, or the reason it has none."""
    if delta.reasons:
        return delta.reasons[0]
    for metric in delta.metrics:
        if metric.verdict is delta.verdict:
            change = f"{metric.metric} {metric.change:+.1%}"
            return f"{change} ({metric.note})" if metric.note else change
    return ""


def _step(delta: CaseDelta | None) -> PinStep | None:
    if delta is None or delta.verdict in (Verdict.NEW, Verdict.REMOVED, Verdict.NOT_SELECTED):
        return None
    note = "" if delta.verdict is Verdict.UNCHANGED else _deciding(delta)
    return PinStep(delta.verdict, note, delta.metrics)


def check_rows(
    results: Sequence[CaseResult | None], deltas: Sequence[CaseDelta | None]
) -> tuple[PinCheckRow, ...]:
    """The case's checks whose verdict is not the same in every run that recorded checks for
    it (``results``: the case per column; ``deltas``: its comparison per adjacent pair)."""
    recorded = [r for r in results if r is not None and r.checks]
    names = list(dict.fromkeys(c.name for r in recorded for c in r.checks))
    rows = []
    for name in names:
        seen = {(c.status if (c := r.check(name)) else None) for r in recorded}
        if len(seen) < 2:
            continue
        cells = tuple(r.check(name) if r is not None else None for r in results)
        steps = tuple(
            next((c for c in d.checks if c.check == name), None) if d is not None else None
            for d in deltas
        )
        rows.append(PinCheckRow(name, cells, steps))
    return tuple(rows)


def build_pin_matrix(
    runs: Sequence[RunRecord],
    *,
    metrics: Sequence[str] = (),
    thresholds: Thresholds | None = None,
) -> PinMatrix:
    """The matrix of ``runs`` in the order given (oldest pin set first, as a release reads)."""
    if len(runs) < 2:
        raise PinMatrixError(
            f"a pin-set comparison needs at least two runs, got {len(runs)}; "
            "name one run per pin set (mlx-harness run SUITE --pin-set all makes them)"
        )
    columns = tuple(column_of(run) for run in runs)
    labels = Counter(c.label for c in columns)
    twice = next((label for label, n in labels.items() if n > 1), None)
    if twice is not None:
        raise PinMatrixError(
            f"pin set '{twice}' is named by more than one run; give each pin set one run"
        )
    comparisons = [
        compare_runs(before, after, thresholds=thresholds)
        for before, after in itertools.pairwise(runs)
    ]
    by_run = [{r.case_id: r for r in run.results} for run in runs]
    by_step = [{d.case_id: d for d in comparison.cases} for comparison in comparisons]
    order = list(dict.fromkeys(cid for cases in by_run for cid in cases))
    rows = []
    for cid in order:
        ref = next(cases[cid] for cases in by_run if cid in cases)
        deltas = [
            step.get(cid) if cid in by_run[i] and cid in by_run[i + 1] else None
            for i, step in enumerate(by_step)
        ]
        rows.append(
            PinRow(
                case_id=cid,
                model=ref.model,
                scenario=ref.scenario,
                point=dict(ref.point),
                cells=tuple(_cell(cases.get(cid), metrics) for cases in by_run),
                steps=tuple(_step(delta) for delta in deltas),
                checks=check_rows([cases.get(cid) for cases in by_run], deltas),
            )
        )
    transitions = tuple(
        PinTransition(
            before=columns[i].label,
            after=columns[i + 1].label,
            package_changes=comparison.package_changes,
            machine_changes=comparison.machine_changes,
            verdicts=Counter(step.verdict for row in rows if (step := row.steps[i]) is not None),
            compared=sum(1 for row in rows if row.steps[i] is not None),
            side_by_side=took_turns(runs[i], runs[i + 1]),
            check_verdicts=comparison.check_counts(),
        )
        for i, comparison in enumerate(comparisons)
    )
    return PinMatrix(columns=columns, rows=tuple(rows), transitions=transitions)
