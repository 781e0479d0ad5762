"""Bisection over released versions to the first bad one, with noisy measurements.

Pure over a ``measure(good, version) -> (Measurement, Measurement)`` callback: the driver runs
the case under the good endpoint and under ``version`` side by side (their pin-set runs take
turns, a round at a time), so each step compares samples taken together and the machine's
drift between steps cannot pass for a change of the package. A version is judged against the
good endpoint measured with it by the rule ``compare`` uses
(:func:`harness.results.compare.compare_metric`): ``bad`` when its status stopped being ok
(a load failure, a crash) or its metric regressed significantly; ``good`` when unchanged or
improved, or when the change the samples cannot decide goes the better way (bisect looks for a
regression); ``inconclusive`` when it goes the worse way. An inconclusive step is measured
again, both sides, pooling the samples, up to ``max_rounds`` measurements each; still
inconclusive, the bisection stops and says between which versions the first bad one lies.

With ``check`` (a named check of the case: ``concurrent``, or ``api_contracts:concurrent``)
the target is that check's own verdict (``CaseResult.checks``), not the case's status nor a
metric: a version is ``bad`` when the check's verdict differs from the good endpoint's measured
with it (pass -> fail, fail -> pass, ...; the case may fail at both), or the check was not
recorded (the case crashed); ``good`` when it is the same; ``inconclusive`` when either side
could not judge it (the case's time ran out), measured again as above.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.metrics import MetricSpec
from harness.core.types import CaseResult, Metric, RunRecord, Status, Unit, Verdict
from harness.results.check_changes import CheckChange, change_verdict
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
    check: CheckVerdict | None = None  # the targeted check's verdict (None: not recorded)

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
    check: str | None = None  # the named check it followed; None: the status and a metric


def split_check(text: str) -> tuple[str | None, str]:
    """``api_contracts:concurrent`` -> (``api_contracts``, ``concurrent``); a bare name has no
    scenario."""
    scenario, _, name = text.rpartition(":")
    return scenario or None, name


def measurement_of(
    run: RunRecord, metric: str | None, version: str, *, check: str | None = None
) -> Measurement:
    """The single case of ``run``: its status and ``metric``'s samples, or with ``check``
    its status and that named check's verdict."""
    results = [r for r in run.results if r.status is not Status.SKIPPED]
    skipped = [r for r in run.results if r.status is Status.SKIPPED]
    if not results and skipped:  # the case cannot run at this version: no step to judge
        first = skipped[0]
        raise BisectError(
            f"case {first.case_id} was skipped at {version} ({first.reason or 'no reason'}); "
            "give --good and --bad versions where it runs"
        )
    if len(results) != 1:
        ids = ", ".join(r.case_id for r in results[:3]) or "none"
        raise BisectError(
            f"bisect needs exactly one case, the run has {len(results)} ({ids}); narrow it with -k"
        )
    (result,) = results
    if check is not None:
        return _check_measurement(result, check, version)
    if metric is None:
        raise BisectError("bisect needs a metric or a check to follow")
    if not result.status.is_ok:
        return Measurement(version, False, result.status.value, reason=result.reason or "")
    found = result.metric(metric)
    if found is None or not found.samples:
        names = ", ".join(m.name for m in result.metrics) or "none"
        raise BisectError(f"case {result.case_id} has no metric '{metric}' (it has: {names})")
    return Measurement(version, True, result.status.value, found.unit, found.samples)


def _check_measurement(result: CaseResult, check: str, version: str) -> Measurement:
    """The case's status and the named check's verdict (None when the case recorded no
    checks at all: it crashed, or errored before them)."""
    scenario, name = split_check(check)
    if scenario is not None and scenario != result.scenario:
        raise BisectError(
            f"--check {check}: case {result.case_id} runs {result.scenario}, not {scenario}"
        )
    found = result.check(name)
    if found is None and result.checks:
        import difflib

        names = [c.name for c in result.checks]
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"did you mean '{close[0]}'?" if close else "it has: " + ", ".join(names)
        raise BisectError(f"case {result.case_id} has no check '{name}'; {hint}")
    return Measurement(
        version, result.status.is_ok, result.status.value, reason=result.reason or "", check=found
    )


def judge_check(good: Measurement, cur: Measurement) -> tuple[StepVerdict, str]:
    """One version's check against the good endpoint's: the same verdict is good, another
    (or none recorded) bad, one not judged on either side inconclusive."""
    assert good.check is not None  # bisect checks the good endpoint recorded it
    name = good.check.name
    if cur.check is None:
        why = f": {cur.reason}" if cur.reason else ""
        return StepVerdict.BAD, f"{name} not recorded (status {cur.status}{why})"
    before, after = good.check.status, cur.check.status
    moved = change_verdict(before, after) or Verdict.UNCHANGED
    change = CheckChange(name, before, after, moved, cur.check.reason)
    if CheckStatus.UNJUDGED in (before, after):
        return StepVerdict.INCONCLUSIVE, f"not judged: {change.line}"
    if before is after:
        return StepVerdict.GOOD, f"{name} {after.label}, as at {good.version}"
    return StepVerdict.BAD, change.line


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
    if verdict is StepVerdict.INCONCLUSIVE and _better_or_same(delta):
        # bisect looks for a regression: a change the samples cannot decide, that goes the
        # better way, is none (two equal releases on a noisy machine differ by a few percent
        # either way; read as inconclusive, the search stopped at the first such step)
        return StepVerdict.GOOD, f"no regression: {delta.label}", delta
    return verdict, delta.label, delta


def _better_or_same(delta: MetricDelta) -> bool:
    """The median moved the better way, or not at all."""
    if delta.change != delta.change:  # NaN: no direction to read
        return False
    return delta.change >= 0 if delta.higher_is_better else delta.change <= 0


def bisect(
    versions: Sequence[str],
    measure: MeasurePair,
    *,
    spec: MetricSpec | None,
    thresholds: Thresholds | None = None,
    max_rounds: int = 3,
    on_step: Callable[[Step], None] | None = None,
    check: str | None = None,
) -> BisectResult:
    """The first bad version of ``versions`` (good endpoint first, bad endpoint last); with
    ``check``, the first whose named check's verdict differs from the good endpoint's
    (``measure`` then gives measurements with ``check`` set: :func:`measurement_of`)."""
    if len(versions) < 2:
        raise BisectError("bisect needs a good and a bad version")
    thresholds = thresholds or Thresholds()
    steps: list[Step] = []

    def judged(good: Measurement, cur: Measurement) -> tuple[StepVerdict, str, MetricDelta | None]:
        if check is None:
            if not good.ok:
                raise BisectError(f"the good version {versions[0]} does not run ok ({good.status})")
            return judge(good, cur, spec, thresholds)
        if good.check is None:
            why = f": {good.reason}" if good.reason else ""
            raise BisectError(
                f"the good version {versions[0]} did not record check {check} "
                f"(status {good.status}{why})"
            )
        return (*judge_check(good, cur), None)

    def step(version: str) -> Step:
        good, cur = measure(versions[0], version)
        rounds = 1
        verdict, note, delta = judged(good, cur)
        while verdict is StepVerdict.INCONCLUSIVE and rounds < max_rounds:
            more_good, more = measure(versions[0], version)
            # a check's verdict is judged again on the new runs; samples are pooled
            good, cur = (more_good, more) if check else (good.pooled(more_good), cur.pooled(more))
            rounds += 1
            verdict, note, delta = judged(good, cur)
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
        return BisectResult(versions[0], None, good, tuple(steps), why, check)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        found = step(versions[mid])
        if found.verdict is StepVerdict.INCONCLUSIVE:
            why = (
                f"{versions[mid]} stayed inconclusive after {found.rounds} rounds "
                f"({found.note}); the first bad version is after {versions[lo]}, "
                f"at or before {versions[hi]}"
            )
            return BisectResult(versions[lo], None, good, tuple(steps), why, check)
        if found.verdict is StepVerdict.GOOD:
            lo = mid
        else:
            hi = mid
    return BisectResult(versions[lo], versions[hi], good, tuple(steps), check=check)


def _check_text(m: Measurement) -> str:
    """``check concurrent pass (case failed)``: the check's verdict and the case's status."""
    shown = f"check {m.check.name} {m.check.status.label}" if m.check else "check not recorded"
    return f"{shown} (case {m.status})"


def evidence_lines(result: BisectResult, metric: str | None) -> list[str]:
    """A few lines: the answer, then each step's medians, n and p (with a check: its
    verdict at each step beside the good endpoint's)."""
    good = result.good
    head = (
        f"first bad: {result.first_bad} (last good: {result.last_good})"
        if result.first_bad
        else f"no first bad version: {result.stopped}"
    )
    if result.check is not None:
        lines = [head, f"  good {good.version}: {_check_text(good)}"]
        for s in result.steps:
            beside = f" vs {s.good.version} {_check_text(s.good)}" if s.good is not None else ""
            lines.append(
                f"  {s.verdict.value:>12} {s.version}: {_check_text(s.measurement)}{beside} "
                f"side by side; {s.note}"
            )
        return lines
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
