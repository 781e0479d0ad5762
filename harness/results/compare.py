"""Baseline vs current run -> verdicts per case and metric. Returns data; never formats.

A metric regresses only when the difference is both significant (Mann-Whitney U on the raw
samples) and larger than its minimum effect (the metric's noise floor or the caller's minimum,
whichever is larger); the direction of "better" comes from the metric's definition. Samples too
few to reach significance make a metric "inconclusive" with the count needed, never "unchanged"
(the rule is :func:`harness.results.significance.decide`). Metrics with one value per item (WER
per clip, perplexity per text chunk: :attr:`harness.core.metrics.MetricSpec.paired`) are compared
item by item instead, a Wilcoxon signed-rank test over the items paired by id
(:func:`harness.results.paired.decide_paired`); items that differ make the case "not comparable".
A case takes its worst metric's verdict:
regressed > improved > inconclusive > unchanged. Cases whose model files, chat template, scenario
version or parameters changed (the rule relative gates follow too:
:func:`harness.results.comparability.not_comparable`), whose machine changed, or whose samples
either side were taken on a dirty
machine (busy, throttled, on battery, swapping: :mod:`harness.results.machine_flags`), are "not
comparable", with the reason. Each named check of a case (``CaseResult.checks``) is judged on
its own too (:mod:`harness.results.check_changes`): a check that fails now and did not before is
``newly_failing`` even when the case's status did not move.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from harness.core.metrics import MetricSpec, VariesBy
from harness.core.types import CaseResult, Metric, RunRecord, Status, Unit, Verdict
from harness.results.check_changes import CheckChange, check_changes
from harness.results.comparability import (
    machine_apart,
    machine_changes,
    model_changes,
    not_comparable,
)
from harness.results.machine_flags import dirty_line, dirty_reasons
from harness.results.output_diff import first_difference
from harness.results.paired import PairedDecision, PairedSummary, decide_paired, item_ids
from harness.results.significance import ALPHA, Decision, decide
from harness.results.stats import bootstrap_ratio_ci, bootstrap_ratio_cis
from harness.scenarios.specs import all_specs

WORKING = frozenset({Status.PASSED, Status.XPASSED})
# a case's verdict is its worst metric's: regressed > improved > inconclusive > unchanged
ROLL_UP = (Verdict.REGRESSED, Verdict.IMPROVED, Verdict.INCONCLUSIVE)


@dataclass(frozen=True)
class Thresholds:
    alpha: float = ALPHA
    min_effect: float = 0.03
    allow_machine_change: bool = False
    allow_model_change: bool = False  # compare variants on purpose (e.g. 4-bit vs float32)
    allow_dirty_machine: bool = False  # compare samples taken on a busy/throttled machine


class Method(str, Enum):
    """How a metric's two runs were compared."""

    REPEATS = "mann-whitney"  # Mann-Whitney U over the repeat samples (a count: by its size)
    PAIRED_ITEMS = "wilcoxon-paired"  # Wilcoxon signed-rank over the items paired by id


@dataclass(frozen=True)
class MetricDelta:
    metric: str
    unit: Unit
    higher_is_better: bool
    baseline_median: float
    current_median: float
    baseline_samples: tuple[float, ...]
    current_samples: tuple[float, ...]
    change: float  # (current - baseline) / |baseline|
    p_value: float | None
    ratio_ci: tuple[float, float] | None
    verdict: Verdict
    note: str = ""  # why: "needs n >= 4 a side", "p=0.0079, minimum effect 3%", ...
    needed_n: int | None = None  # samples a side that would let the test decide, when too few
    method: Method = Method.REPEATS
    paired: PairedSummary | None = None  # PAIRED_ITEMS: items, differing, median/mean difference

    @property
    def label(self) -> str:
        """``inconclusive (needs n >= 4 a side)``: the verdict with its reason."""
        return f"{self.verdict.value} ({self.note})" if self.note else self.verdict.value


@dataclass(frozen=True)
class CaseDelta:
    case_id: str
    model: str
    scenario: str
    point: Mapping[str, object]
    baseline_status: Status | None
    current_status: Status | None
    verdict: Verdict
    reasons: tuple[str, ...] = ()
    metrics: tuple[MetricDelta, ...] = ()
    # where the recorded outputs (greedy answers) first differ; None: the same, or none kept
    output_change: str | None = None
    # each named check whose verdict changed, whatever the case's status did (a check that
    # goes from pass to fail in a case that failed both times is here)
    checks: tuple[CheckChange, ...] = ()


@dataclass(frozen=True)
class Comparison:
    baseline_run: str
    current_run: str
    machine_changes: tuple[str, ...]
    package_changes: tuple[str, ...]
    git: tuple[str | None, str | None]
    cases: tuple[CaseDelta, ...] = field(default_factory=tuple)
    # "my-model: model files changed: revision ... -> ...", allowed (--allow-model-change) or not
    model_changes: tuple[str, ...] = ()

    def counts(self) -> Counter[Verdict]:
        return Counter(c.verdict for c in self.cases)

    @property
    def regressions(self) -> tuple[CaseDelta, ...]:
        bad = (Verdict.REGRESSED, Verdict.NEWLY_FAILING)
        return tuple(c for c in self.cases if c.verdict in bad)

    @property
    def output_changes(self) -> tuple[CaseDelta, ...]:
        """Cases whose recorded outputs differ from the baseline's."""
        return tuple(c for c in self.cases if c.output_change is not None)

    @property
    def inconclusive(self) -> tuple[CaseDelta, ...]:
        """Cases whose samples cannot decide (too few, or a change that is not significant)."""
        return tuple(c for c in self.cases if c.verdict is Verdict.INCONCLUSIVE)

    def metric_counts(self) -> Counter[Verdict]:
        """Verdicts of every metric compared, over all cases."""
        return Counter(d.verdict for c in self.cases for d in c.metrics)

    def check_counts(self) -> Counter[Verdict]:
        """Verdicts of every check whose verdict changed, over all cases."""
        return Counter(change.verdict for c in self.cases for change in c.checks)

    def changed_checks(self, *verdicts: Verdict) -> tuple[tuple[CaseDelta, CheckChange], ...]:
        """Each (case, check change) of one of ``verdicts`` (any change when none given)."""
        return tuple(
            (case, change)
            for case in self.cases
            for change in case.checks
            if not verdicts or change.verdict in verdicts
        )


def package_changes(baseline: RunRecord, current: RunRecord) -> tuple[str, ...]:
    names = sorted(set(baseline.packages) | set(current.packages))
    return tuple(
        f"{n}: {baseline.packages.get(n)} -> {current.packages.get(n)}"
        for n in names
        if baseline.packages.get(n) != current.packages.get(n)
    )


# Bootstrap intervals drawn ahead for a whole comparison (:func:`_intervals`), by the ids of
# the baseline's and the current Metric objects
Intervals = Mapping[tuple[int, int], tuple[float, float]]


def compare_metric(
    spec: MetricSpec | None,
    base: Metric,
    cur: Metric,
    thresholds: Thresholds,
    *,
    items: tuple[Sequence[str], Sequence[str]] | None = None,
    intervals: Intervals | None = None,
) -> MetricDelta:
    """One metric's verdict by :func:`harness.results.significance.decide` (the rule relative
    gates use), or for a per-item metric by :func:`harness.results.paired.decide_paired` over
    ``items`` (the baseline's and the current ids of the samples; by position when not given).
    ``intervals``: the bootstrap intervals drawn ahead for every metric of a comparison."""
    higher = spec.higher_is_better if spec else True
    floor = max(spec.noise_floor if spec else 0.0, thresholds.min_effect)
    if spec is not None and spec.paired:
        return _compare_items(base, cur, higher, floor, thresholds.alpha, items)
    # the samples the one Summary is over: a NaN or infinite sample is dropped, as gates drop it
    before, after = base.summary.finite, cur.summary.finite
    decision = decide(
        before,
        after,
        unit=cur.unit,
        higher_is_better=higher,
        effect=floor,
        alpha=thresholds.alpha,
        once_a_case=spec is not None and spec.varies_by is VariesBy.CASE,
    )
    ci = None
    if _testable(before, after):
        drawn = intervals.get((id(base), id(cur))) if intervals is not None else None
        ci = drawn or bootstrap_ratio_ci(before, after)
    return _delta(base, cur, higher, decision, ratio_ci=ci, needed_n=decision.needed_n)


def _testable(before: Sequence[float], after: Sequence[float]) -> bool:
    """Whether a pair of sides gets a bootstrap interval: 3 finite samples a side or more."""
    return min(len(before), len(after)) >= 3


def _intervals(
    pairs: list[tuple[CaseResult, CaseResult]], specs: Mapping[str, MetricSpec]
) -> dict[tuple[int, int], tuple[float, float]]:
    """The bootstrap interval of every metric :func:`compare_metric` may test in ``pairs`` of
    cases (baseline, current), drawn all at once (:func:`bootstrap_ratio_cis`: the very
    intervals one call a metric gives), by the ids of the two Metric objects."""
    keys, sides = [], []
    for base, cur in pairs:
        for m in base.metrics:
            other = cur.metric(m.name)
            spec = specs.get(m.name)
            paired = spec is not None and spec.paired
            if other is None or not m.samples or not other.samples or paired:
                continue
            before, after = m.summary.finite, other.summary.finite
            if _testable(before, after):
                keys.append((id(m), id(other)))
                sides.append((before, after))
    return dict(zip(keys, bootstrap_ratio_cis(sides), strict=True))


def _delta(
    base: Metric, cur: Metric, higher: bool, decision: Decision | PairedDecision, **extra: Any
) -> MetricDelta:
    """The delta of one metric: its samples a side and the decision's change, p and verdict."""
    return MetricDelta(
        metric=base.name,
        unit=cur.unit,
        higher_is_better=higher,
        baseline_median=base.median,
        current_median=cur.median,
        baseline_samples=base.samples,
        current_samples=cur.samples,
        change=decision.change,
        p_value=decision.p_value,
        verdict=decision.verdict,
        note=decision.note,
        **extra,
    )


def _compare_items(
    base: Metric,
    cur: Metric,
    higher: bool,
    floor: float,
    alpha: float,
    items: tuple[Sequence[str], Sequence[str]] | None,
) -> MetricDelta:
    base_ids, cur_ids = items or (item_ids({}, len(base.samples)), item_ids({}, len(cur.samples)))
    decision = decide_paired(
        base_ids,
        base.samples,
        cur_ids,
        cur.samples,
        higher_is_better=higher,
        effect=floor,
        alpha=alpha,
    )
    return _delta(
        base, cur, higher, decision, ratio_ci=None, method=Method.PAIRED_ITEMS,
        paired=decision.summary,
    )  # fmt: skip


def _metric_deltas(
    base: CaseResult,
    cur: CaseResult,
    specs: Mapping[str, MetricSpec],
    thresholds: Thresholds,
    intervals: Intervals,
) -> tuple[MetricDelta, ...]:
    return tuple(
        compare_metric(
            specs.get(m.name),
            m,
            other,
            thresholds,
            items=(
                item_ids(base.artifacts, len(m.samples)),
                item_ids(cur.artifacts, len(other.samples)),
            ),
            intervals=intervals,
        )
        for m in base.metrics
        if (other := cur.metric(m.name)) is not None and m.samples and other.samples
    )


def _case_delta(
    base: CaseResult | None,
    cur: CaseResult | None,
    baseline: RunRecord,
    current: RunRecord,
    specs: Mapping[str, MetricSpec],
    thresholds: Thresholds,
    machine_reasons: tuple[str, ...],
    intervals: Intervals,
) -> CaseDelta:
    ref = cur or base
    assert ref is not None
    make = functools.partial(
        CaseDelta,
        ref.case_id,
        ref.model,
        ref.scenario,
        dict(ref.point),
        base.status if base else None,
        cur.status if cur else None,
    )
    if base is None:
        return make(verdict=Verdict.NEW)
    if cur is None:
        chosen = [*current.selection, *([f"shard {current.shard.label}"] if current.shard else [])]
        if chosen:  # left out on purpose, not gone from the suite
            return make(
                verdict=Verdict.NOT_SELECTED,
                reasons=(f"not selected in this run ({', '.join(chosen)})",),
            )
        return make(verdict=Verdict.REMOVED)
    # each check is judged on its own, whatever the case's status and comparability: a
    # verdict is no timing, so another machine or model files do not stop it (they are named)
    make = functools.partial(make, checks=check_changes(base, cur))
    # a changed model is named first wherever its case's status moved: it may be why
    changed = tuple(model_changes(baseline, current, base.model, cur.model))
    if base.status in WORKING and cur.status.is_failing:
        # a case failed by a gate still measured: keep its metric deltas for the report
        return make(
            verdict=Verdict.NEWLY_FAILING,
            reasons=(*changed, cur.reason or cur.status.value),
            metrics=_metric_deltas(base, cur, specs, thresholds, intervals),
        )
    if base.status in WORKING and cur.status is Status.XFAILED:
        # it worked and now fails as a known-broken entry says (a ledger entry that matches
        # the new versions): still a case that stopped working, named as known
        return make(
            verdict=Verdict.NEWLY_FAILING,
            reasons=(*changed, f"known broken (xfail): {_known(cur.reason)}"),
        )
    if (base.status.is_failing or base.status is Status.XFAILED) and cur.status in WORKING:
        return make(verdict=Verdict.FIXED, reasons=changed)
    if Status.INTERRUPTED in (base.status, cur.status):
        which = "current" if cur.status is Status.INTERRUPTED else "baseline"
        return make(
            verdict=Verdict.NOT_COMPARABLE,
            reasons=(f"not finished in the {which} run (interrupted; --resume it)",),
        )
    if not (base.status in WORKING and cur.status in WORKING):
        if base.status is cur.status:
            return make(verdict=Verdict.UNCHANGED)
        return make(
            verdict=Verdict.NOT_COMPARABLE,
            reasons=(f"status {base.status.value} -> {cur.status.value}",),
        )
    reasons = [
        *machine_reasons,
        *not_comparable(
            base,
            cur,
            (baseline.models.get(base.model), current.models.get(cur.model)),
            allow_model_change=thresholds.allow_model_change,
        ),
        *([] if thresholds.allow_dirty_machine else dirty_sides(base, cur)),
    ]
    if reasons:
        return make(
            verdict=Verdict.NOT_COMPARABLE,
            reasons=tuple(reasons),
        )
    deltas = _metric_deltas(base, cur, specs, thresholds, intervals)
    unpaired = tuple(f"{d.metric}: {d.note}" for d in deltas if d.verdict is Verdict.NOT_COMPARABLE)
    if unpaired:
        return make(verdict=Verdict.NOT_COMPARABLE, reasons=unpaired, metrics=deltas)
    verdicts = {d.verdict for d in deltas}
    verdict = next((v for v in ROLL_UP if v in verdicts), Verdict.UNCHANGED)
    return make(
        verdict=verdict,
        metrics=deltas,
        output_change=first_difference(base.artifacts, cur.artifacts),
    )


def compare_runs(
    baseline: RunRecord,
    current: RunRecord,
    *,
    specs: Mapping[str, MetricSpec] | None = None,
    thresholds: Thresholds | None = None,
) -> Comparison:
    """Compare every case of ``current`` with the same case id in ``baseline``."""
    if specs is None:
        specs = all_specs()
    thresholds = thresholds or Thresholds()
    machine = machine_changes(baseline.machine, current.machine)
    machine_reasons = machine_apart(
        baseline.machine, current.machine, allow_machine_change=thresholds.allow_machine_change
    )
    base_by_id = {r.case_id: r for r in baseline.results}
    cur_by_id = {r.case_id: r for r in current.results}
    order = list(cur_by_id) + [cid for cid in base_by_id if cid not in cur_by_id]
    both = [(base_by_id[cid], cur) for cid, cur in cur_by_id.items() if cid in base_by_id]
    intervals = _intervals(both, specs)  # all drawn at once, before the cases are judged
    cases = tuple(
        _case_delta(
            base_by_id.get(cid),
            cur_by_id.get(cid),
            baseline,
            current,
            specs,
            thresholds,
            machine_reasons,
            intervals,
        )
        for cid in order
    )
    return Comparison(
        baseline_run=baseline.run_id,
        current_run=current.run_id,
        machine_changes=machine,
        package_changes=package_changes(baseline, current),
        git=(baseline.git_sha, current.git_sha),
        cases=cases,
        model_changes=tuple(
            f"{key}: {line}"
            for key in current.models
            if key in baseline.models
            for line in model_changes(baseline, current, key, key)
        ),
    )


def dirty_sides(base: CaseResult, cur: CaseResult) -> list[str]:
    """``current run measured on a dirty machine: machine busy (...)``, for each side whose
    samples cannot be trusted (:mod:`harness.results.machine_flags`)."""
    return [
        f"{side} run measured on a dirty machine: {dirty_line(reasons)}"
        for side, reasons in (("baseline", dirty_reasons(base)), ("current", dirty_reasons(cur)))
        if reasons
    ]


def _known(reason: str | None) -> str:
    """An xfail's reason without the ``known: `` its judge puts first."""
    text = reason or "no reason given"
    return text.removeprefix("known: ")
