"""How many times a case runs inside its worker: a fixed count, or ``repeats: auto``.

A scenario runs its own loop of ``warmup + repeats`` runs. ``auto`` calls it first for the
warm-ups and ``min`` runs, then one run at a time (no warm-up: the model is warm) until the
median of every headline metric has a 95% CI (order statistics,
:func:`harness.results.stats.relative_ci_width`) no wider than ``rel_ci`` of the median, or
``max`` runs were taken, or the next run would pass ``budget_s`` seconds of scenario time. The
samples stay in the worker until the case is done; one reply carries them all.

Merging batches: a metric (or a list artifact) with one value per measured run in the first
batch gets the later batches' values appended; one with a single value for the whole case (a
ceiling, bytes per token) keeps the first batch's. The stop, the headline CI widths and every
metric's coefficient of variation go into the case's ``repeats`` artifact.

Progress: a :class:`harness.runner.repeat_progress.RepeatCounter` hears of each batch's start
and end (and, through the scenario's ``ctx.run_done``, of each run in it).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.core.types import AutoRepeats, Metric, Unit
from harness.results.stats import coefficient_of_variation, relative_ci_width
from harness.runner.repeat_progress import RepeatCounter
from harness.scenarios.base import Scenario, ScenarioOutput

ARTIFACT = "repeats"  # the artifact key of :meth:`RepeatStop.to_json`

RunBatch = Callable[[int, int], ScenarioOutput]  # (warmup, repeats) -> what the scenario made


def headline_names(scenario: Scenario[Any]) -> tuple[str, ...]:
    """The metrics whose medians ``auto`` must pin down: the scenario's own
    ``headline_metrics`` when it declares them, else its higher-is-better tokens/s metrics."""
    if scenario.headline_metrics:
        return scenario.headline_metrics
    return tuple(
        s.name
        for s in scenario.metrics
        if s.higher_is_better and s.unit is Unit.TOKENS_PER_SECOND and not s.is_pattern
    )


def percent(value: float) -> str:
    return f"{value:.1%}" if math.isfinite(value) else "n/a (too few samples)"


@dataclass(frozen=True)
class RepeatStop:
    """How many measured runs a case took, and (auto) why it stopped there."""

    mode: str  # "fixed", "auto" or "not_applicable" (its samples come from elsewhere)
    taken: int
    reason: str | None = None  # auto: "ci 1.6% <= 2%", "max repeats 20 reached, ci 3.1%", ...
    rel_ci: dict[str, float] = field(default_factory=dict)  # headline metric -> CI width
    cv: dict[str, float | None] = field(default_factory=dict)  # every metric
    target: float | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "mode": self.mode,
            "taken": self.taken,
            "rel_ci": {k: (v if math.isfinite(v) else None) for k, v in self.rel_ci.items()},
            "cv": dict(self.cv),
        }
        if self.reason is not None:
            out["reason"] = self.reason
        if self.target is not None:
            out["rel_ci_target"] = self.target
        return out


def _per_run(first: ScenarioOutput, batch: int) -> tuple[set[str], set[str]]:
    """Names of the metrics and list artifacts holding one value per measured run."""
    metrics = {m.name for m in first.metrics if len(m.samples) == batch}
    lists = {k for k, v in first.artifacts.items() if isinstance(v, list) and len(v) == batch}
    return metrics, lists


PerRun = tuple[set[str], set[str]]  # names of the per-run metrics and list artifacts


def append_per_run(
    metrics: Sequence[Metric],
    artifacts: Mapping[str, Any],
    more_metrics: Sequence[Metric],
    more_artifacts: Mapping[str, Any],
    per_run: PerRun,
) -> tuple[tuple[Metric, ...], dict[str, Any]]:
    """The per-run metrics' samples and list artifacts with the later batch's appended;
    everything else as it was (see the module's note)."""
    metric_names, list_names = per_run
    added = {m.name: m for m in more_metrics}
    merged = tuple(
        dataclasses.replace(m, samples=m.samples + added[m.name].samples)
        if m.name in metric_names and m.name in added
        else m
        for m in metrics
    )
    out = dict(artifacts)
    for key in list_names:
        extra = more_artifacts.get(key)
        if isinstance(extra, list) and isinstance(out.get(key), list):
            out[key] = [*out[key], *extra]
    return merged, out


def merge(base: ScenarioOutput, more: ScenarioOutput, per_run: PerRun) -> ScenarioOutput:
    """``base`` with ``more``'s per-run values appended (see the module's note)."""
    metrics, artifacts = append_per_run(
        base.metrics, base.artifacts, more.metrics, more.artifacts, per_run
    )
    failures = base.failures + tuple(f for f in more.failures if f not in base.failures)
    return ScenarioOutput(
        metrics,
        artifacts,
        failures,
        base.skip_reason or more.skip_reason,
        base.timed_out or more.timed_out,
        base.checks or more.checks,
    )


def _widths(output: ScenarioOutput, headline: tuple[str, ...]) -> dict[str, float]:
    return {m.name: relative_ci_width(m.samples) for m in output.metrics if m.name in headline}


def _cvs(output: ScenarioOutput) -> dict[str, float | None]:
    return {m.name: coefficient_of_variation(m.samples) for m in output.metrics}


def auto_stop_reason(
    auto: AutoRepeats, taken: int, elapsed: float, per_run: float, widths: dict[str, float]
) -> str | None:
    """Why to stop after ``taken`` runs, or None to take another."""
    worst = max(widths.values()) if widths else math.inf
    target = f"{auto.rel_ci:.1%}".replace(".0%", "%")
    if widths and worst <= auto.rel_ci:
        return f"ci {percent(worst)} <= {target}"
    if taken >= auto.max_repeats:
        return f"max repeats {auto.max_repeats} reached, ci {percent(worst)}"
    if elapsed + per_run > auto.budget_s:
        return (
            f"budget {auto.budget_s:g} s spent ({elapsed:.0f} s measured, a run takes "
            f"{per_run:.1f} s), ci {percent(worst)}"
        )
    return None


def run_repeats(
    run: RunBatch,
    repeats: int,
    warmup: int,
    auto: AutoRepeats | None,
    headline: tuple[str, ...],
    *,
    applies: bool = True,
    clock: Callable[[], float] = time.perf_counter,
    counter: RepeatCounter | None = None,
) -> tuple[ScenarioOutput, RepeatStop]:
    """Run the case: ``repeats`` runs, or with ``auto`` as many as its median needs.
    ``counter`` follows the runs batch by batch (the scenario reports each run to it)."""

    def batch(warm: int, runs: int) -> ScenarioOutput:
        if counter is not None:
            counter.begin(warm, runs)
        out = run(warm, runs)
        if counter is not None:
            counter.end(runs, out.artifacts)
        return out

    start = clock()
    output = batch(warmup, repeats)
    per_run_names = _per_run(output, repeats)
    headline = tuple(n for n in headline if n in per_run_names[0])  # not a per-case constant
    if auto is None or not applies:
        if not applies:  # its samples come from elsewhere (reloads, items, requests)
            return output, RepeatStop(
                "not_applicable",
                1,
                "repeats do not apply to this scenario: ran once",
                _widths(output, headline),
                _cvs(output),
            )
        return output, RepeatStop(
            "fixed",
            repeats,
            None,
            _widths(output, headline),
            _cvs(output),
        )
    taken = repeats
    while True:
        widths = _widths(output, headline)
        elapsed = clock() - start
        if output.failures or output.skip_reason or output.timed_out:
            reason: str | None = "the case did not pass: no more runs"
        elif not widths:
            reason = "no headline metric measured: no more runs"
        else:
            reason = auto_stop_reason(auto, taken, elapsed, elapsed / max(taken, 1), widths)
        if reason is not None:
            return output, RepeatStop("auto", taken, reason, widths, _cvs(output), auto.rel_ci)
        output = merge(output, batch(0, 1), per_run_names)
        taken += 1
