"""Bisection over released versions to the first bad one, with noisy measurements.

Pure over a ``measure(good, version) -> (Measurement, Measurement)`` callback: the driver runs
the case under the good endpoint and under ``version`` side by side (their pin-set runs take
turns, a round at a time), so each step compares samples taken together and the machine's
drift between steps cannot pass for a change of the package. A version is judged against the
good endpoint measured with it by the rule ``compare`` uses
(:func:`harness.results.compare.compare_metric`): ``bad`` when its status stopped being ok
(a load failure, a crash) or its metric regressed significantly; ``good`` when unchanged or
improved; ``inconclusive`` otherwise. An inconclusive step is measured again, both sides,
pooling the samples, up to ``max_rounds`` measurements each; still inconclusive, the bisection
stops and says between which versions the first bad one lies.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from harness.core.metrics import MetricSpec
from harness.core.types import Metric, RunRecord, Status, Unit
from harness.results.compare import MetricDelta, Thresholds, compare_metric


class StepVerdict(str, Enum):
    GOOD = "good"
    BAD = "bad"
    INCONCLUSIVE = "inconclusive"


class BisectError(ValueError):
    """A run that cannot feed the bisection (no such case, several cases); one line."""


@dataclass(frozen=True)
class Measurement:
    """One version's case: whether it ran ok, and the metric's raw samples (pooled)."""

    version: str
    ok: bool
    status: str  # passed, errored, crashed, ...
    unit: Unit = Unit.TOKENS_PER_SECOND
    samples: tuple[float, ...] = ()
    reason: str = ""

    def pooled(self, more: Measurement) -> Measurement:
        """This and a later measurement of the same version: samples together, latest status."""
        if not more.ok:
            return more
        return Measurement(
            self.version, True, more.status, more.unit, (*self.samples, *more.samples)
        )

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else float("nan")


# (good endpoint, version) -> their measurements, taken side by side
MeasurePair = Callable[[str, str], tuple[Measurement, Measurement]]


@dataclass(frozen=True)
class Step:
    version: str
    verdict: StepVerdict
    measurement: Measurement
    note: str  # why: "status errored", "regressed (p=0.008, ...)"
    delta: MetricDelta | None = None
    rounds: int = 1
    good: Measurement | None = None  # the good endpoint, measured side by side with it


@dataclass(frozen=True)
class BisectResult:
    last_good: str
    first_bad: str | None  # None: the bad endpoint was not bad, or a step stayed inconclusive
    good: Measurement  # the good endpoint as measured at the first step
    steps: tuple[Step, ...] = field(default_factory=tuple)
    stopped: str = ""  # why it stopped without naming a first bad version


def measurement_of(run: RunRecord, metric: str, version: str) -> Measurement:
    """The single case of ``run``: its status and ``metric``'s samples."""
    results = [r for r in run.results if r.status is not Status.SKIPPED]
    if len(results) != 1:
        ids = ", ".join(r.case_id for r in run.results[:3]) or "none"
        raise BisectError(
            f"bisect needs exactly one case, the run has {len(run.results)} ({ids}); "
            "narrow it with -k"
        )
    (result,) = results
    if not result.status.is_ok:
        return Measurement(version, False, result.status.value, reason=result.reason or "")
    found = result.metric(metric)
    if found is None or not found.samples:
        names = ", ".join(m.name for m in result.metrics) or "none"
        raise BisectError(f"case {result.case_id} has no metric '{metric}' (it has: {names})")
    return Measurement(version, True, result.status.value, found.unit, found.samples)


def judge(
    good: Measurement, cur: Measurement, spec: MetricSpec | None, thresholds: Thresholds
) -> tuple[StepVerdict, str, MetricDelta | None]:
    """One version against the good endpoint."""
    if not cur.ok:
        why = f": {cur.reason}" if cur.reason else ""
        return StepVerdict.BAD, f"status {cur.status}{why}", None
    name = spec.name if spec else "metric"
    delta = compare_metric(
        spec, Metric(name, good.unit, good.samples), Metric(name, cur.unit, cur.samples), thresholds
    )
    verdict = {"regressed": StepVerdict.BAD, "inconclusive": StepVerdict.INCONCLUSIVE}.get(
        delta.verdict.value, StepVerdict.GOOD
    )
    return verdict, delta.label, delta


def bisect(
    versions: Sequence[str],
    measure: MeasurePair,
    *,
    spec: MetricSpec | None,
    thresholds: Thresholds | None = None,
    max_rounds: int = 3,
    on_step: Callable[[Step], None] | None = None,
) -> BisectResult:
    """The first bad version of ``versions`` (good endpoint first, bad endpoint last)."""
    if len(versions) < 2:
        raise BisectError("bisect needs a good and a bad version")
    thresholds = thresholds or Thresholds()
    steps: list[Step] = []

    def step(version: str) -> Step:
        good, cur = measure(versions[0], version)
        if not good.ok:
            raise BisectError(f"the good version {versions[0]} does not run ok ({good.status})")
        rounds = 1
        verdict, note, delta = judge(good, cur, spec, thresholds)
        while verdict is StepVerdict.INCONCLUSIVE and rounds < max_rounds:
            more_good, more = measure(versions[0], version)
            good, cur = good.pooled(more_good), cur.pooled(more)
            rounds += 1
            verdict, note, delta = judge(good, cur, spec, thresholds)
        done = Step(version, verdict, cur, note, delta, rounds, good)
        steps.append(done)
        if on_step is not None:
            on_step(done)
        return done

    lo, hi = 0, len(versions) - 1
    end = step(versions[hi])
    good = end.good or end.measurement
    if end.verdict is not StepVerdict.BAD:
        why = f"the bad version {versions[hi]} is {end.verdict.value} ({end.note})"
        return BisectResult(versions[0], None, good, tuple(steps), why)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        found = step(versions[mid])
        if found.verdict is StepVerdict.INCONCLUSIVE:
            why = (
                f"{versions[mid]} stayed inconclusive after {found.rounds} rounds "
                f"({found.note}); the first bad version is after {versions[lo]}, "
                f"at or before {versions[hi]}"
            )
            return BisectResult(versions[lo], None, good, tuple(steps), why)
        if found.verdict is StepVerdict.GOOD:
            lo = mid
        else:
            hi = mid
    return BisectResult(versions[lo], versions[hi], good, tuple(steps))


def evidence_lines(result: BisectResult, metric: str) -> list[str]:
    """A few lines: the answer, then each step's medians, n and p."""
    good = result.good
    head = (
        f"first bad: {result.first_bad} (last good: {result.last_good})"
        if result.first_bad
        else f"no first bad version: {result.stopped}"
    )
    lines = [
        head,
        f"  good {good.version}: {metric} median {good.median:.4g} (n={len(good.samples)})",
    ]
    for s in result.steps:
        m = s.measurement
        measured = f"median {m.median:.4g} (n={len(m.samples)})" if m.ok else f"status {m.status}"
        beside = (
            f" vs {s.good.version} median {s.good.median:.4g} (n={len(s.good.samples)}) "
            "side by side"
            if s.good is not None and s.good.ok
            else ""
        )
        lines.append(f"  {s.verdict.value:>12} {s.version}: {measured}{beside}; {s.note}")
    return lines
