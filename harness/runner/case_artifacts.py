"""What the runner records in every case's artifacts beside the scenario's own, typed for the
report: how ``repeats`` ended (:class:`harness.runner.repeat_loop.RepeatStop` writes it under
``repeats``) and the time spent inside backend calls (:mod:`harness.runner.worker` writes it
under ``timing``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.scenarios.artifacts import ScenarioArtifacts


@dataclass(frozen=True)
class RecordedStop:
    """How many measured runs a case took, and (``repeats: auto``) why it stopped there."""

    mode: str | None = None  # fixed, auto or not_applicable
    taken: int | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Timing:
    """Seconds inside backend calls: the model's load (reported with the next case) and the
    scenario's run."""

    load_s: float | None = None
    scenario_s: float | None = None

    @property
    def known(self) -> bool:
        return all(v is not None and math.isfinite(v) for v in (self.load_s, self.scenario_s))


@dataclass(frozen=True)
class CaseArtifacts(ScenarioArtifacts):
    repeats: RecordedStop | None = None
    timing: Timing | None = None
