"""A timing case measured in rounds, for pin sets that take turns (:mod:`harness.runner.turns`).

Alone, a case is one request to its worker: warm-ups, then every measured run. Taking turns,
a case that measures time is split into rounds: the first with the warm-ups and two runs (so
a metric with one value per run can be told from one with a value per case), then one run per
round. Between rounds the run hands the turn on, so each pin set's round ``r`` is measured
next to the others'. ``repeats: auto`` plans rounds up to its maximum and stops measuring
when the CI of every headline median is narrow enough (:func:`auto_stop_reason`); the
remaining turns are passed without work, so every run passes the same number per case.

The rounds' replies are merged as the worker merges ``auto`` batches
(:func:`harness.runner.repeat_loop.merge`): per-run metrics and list artifacts get the later
rounds' values appended; the seconds of the ``timing`` artifact add up; the ``repeats``
artifact is rebuilt for the whole case with the rounds it took.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.types import Case, Metric, Status
from harness.results.machine_flags import ARTIFACT as MACHINE_ARTIFACT
from harness.results.machine_flags import merged as merged_state
from harness.results.stats import coefficient_of_variation, relative_ci_width
from harness.runner.outcome import Outcome
from harness.runner.repeat_loop import ARTIFACT as REPEATS_ARTIFACT
from harness.runner.repeat_loop import (
    PerRun,
    RepeatStop,
    append_per_run,
    auto_stop_reason,
    headline_names,
)

FIRST_ROUND = 2  # measured runs in the first round (see the module's note)
TIMING_ARTIFACT = "timing"  # harness.runner.worker.TIMING_ARTIFACT


@dataclass(frozen=True)
class RoundPlan:
    """The measured runs of each round; one round: the case is one request, as alone."""

    sizes: tuple[int, ...]
    headline: tuple[str, ...] = ()  # the metrics whose CI ``auto`` pins down (and reports)

    @property
    def turns(self) -> int:
        """Turns the case passes on (one after each planned round, worked or not)."""
        return len(self.sizes)


def round_plan(case: Case, measures_time: bool, headline: Sequence[str] = ()) -> RoundPlan:
    """How ``case`` is measured when pin sets take turns: a pure function of the case, so
    every pin set's run plans the same rounds."""
    auto, names = case.auto_repeats, tuple(headline)
    if not measures_time:
        return RoundPlan((case.repeats,), names)
    if auto is not None:
        first = max(FIRST_ROUND, case.repeats)
        later = max(auto.max_repeats - first, 0)
        return RoundPlan((first, *([1] * later)), names)
    if case.repeats <= FIRST_ROUND:
        return RoundPlan((case.repeats,), names)
    return RoundPlan((FIRST_ROUND, *([1] * (case.repeats - FIRST_ROUND))), names)


def plan_for(case: Case) -> RoundPlan:
    """:func:`round_plan` with what the case's registered scenario declares."""
    from harness.scenarios import SCENARIOS

    try:
        scenario = SCENARIOS.get(case.scenario)
    except Exception:  # unknown or broken plug-in: the worker says what is wrong with it
        return RoundPlan((case.repeats,))
    timed = scenario.measures_time and scenario.repeats_apply
    return round_plan(case, timed, headline_names(scenario))


def per_run_names(first: Outcome, size: int) -> PerRun:
    """Metrics and list artifacts of the first round with one value per measured run."""
    metrics = {m.name for m in first.metrics if len(m.samples) == size}
    lists = {k for k, v in first.artifacts.items() if isinstance(v, list) and len(v) == size}
    return metrics, lists


def merge_round(base: Outcome, more: Outcome, per_run: PerRun) -> Outcome:
    """``base`` with the next round's values appended; a round that did not pass ends the case
    with its status and reason (the values measured before it are kept)."""
    if more.status is not Status.PASSED:
        return dataclasses.replace(base, status=more.status, reason=more.reason)
    metrics, artifacts = append_per_run(
        base.metrics, base.artifacts, more.metrics, more.artifacts, per_run
    )
    artifacts[TIMING_ARTIFACT] = summed_timing(base.artifacts, more.artifacts)
    state = merged_state(base.artifacts.get(MACHINE_ARTIFACT), more.artifacts.get(MACHINE_ARTIFACT))
    if state is not None:
        artifacts[MACHINE_ARTIFACT] = state
    return dataclasses.replace(base, metrics=metrics, artifacts=artifacts)


def summed_timing(a: dict[str, Any], b: dict[str, Any]) -> Any:
    """Two measurements' ``timing`` artifacts as one: their seconds added (the first's when
    either is missing)."""
    first, second = a.get(TIMING_ARTIFACT), b.get(TIMING_ARTIFACT)
    if not isinstance(first, dict) or not isinstance(second, dict):
        return first
    out = dict(first)
    for key, value in second.items():
        if isinstance(value, (int, float)) and isinstance(out.get(key), (int, float)):
            out[key] = out[key] + value
    return out


def widths(metrics: Sequence[Metric], headline: Sequence[str]) -> dict[str, float]:
    return {m.name: relative_ci_width(m.samples) for m in metrics if m.name in headline}


def auto_stop(
    case: Case, outcome: Outcome, plan: RoundPlan, taken: int, elapsed_s: float
) -> str | None:
    """``repeats: auto`` between rounds: why to stop measuring now, or None for another round."""
    auto = case.auto_repeats
    if auto is None:
        return None
    found = widths(outcome.metrics, plan.headline)
    if not found:
        return "no headline metric measured: no more runs"
    return auto_stop_reason(auto, taken, elapsed_s, elapsed_s / max(taken, 1), found)


def with_stop(
    case: Case, outcome: Outcome, plan: RoundPlan, taken: int, rounds: int, reason: str | None
) -> Outcome:
    """The case's ``repeats`` artifact for all its rounds (measured runs, CI widths, CVs)."""
    auto = case.auto_repeats
    stop = RepeatStop(
        "auto" if auto is not None else "fixed",
        taken,
        reason,
        widths(outcome.metrics, plan.headline),
        {m.name: coefficient_of_variation(m.samples) for m in outcome.metrics},
        auto.rel_ci if auto is not None else None,
    )
    artifact = {**stop.to_json(), "rounds": rounds, "rounds_planned": plan.turns}
    return dataclasses.replace(outcome, artifacts={**outcome.artifacts, REPEATS_ARTIFACT: artifact})


def scenario_seconds(outcome: Outcome) -> float:
    """Seconds the worker spent in the scenario so far (its ``timing`` artifact)."""
    timing = outcome.artifacts.get(TIMING_ARTIFACT)
    value = timing.get("scenario_s") if isinstance(timing, dict) else None
    return float(value) if isinstance(value, (int, float)) else 0.0
