"""What the runner records in every case's artifacts beside the scenario's own, typed for the
report: how ``repeats`` ended (:class:`harness.runner.repeat_loop.RepeatStop` writes it under
``repeats``), the time spent inside backend calls (:mod:`harness.runner.worker` writes it
under ``timing``) and the machine's state while the case ran
(:meth:`harness.runner.sample_guard.SampleGuard.finish` writes it under ``machine_state``)."""

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
class MachineReading:
    """One reading of the machine (:class:`harness.runner.machine_state.MachineState`)."""

    cpu_mhz: float | None = None
    cpu_max_mhz: float | None = None
    governor: str | None = None
    cpu_speed_limit_pct: float | None = None
    hottest_c: float | None = None
    on_battery: bool | None = None
    low_power_mode: bool | None = None
    swap_used_bytes: int | None = None
    memory_pressure: str | None = None


@dataclass(frozen=True)
class Energy:
    joules_per_token: float | None = None


@dataclass(frozen=True)
class MachineStateRecord(ScenarioArtifacts):
    """The machine while the case's measured runs ran, and the waits before them."""

    before: MachineReading | None = None
    others_pct: float | None = None  # CPU time other processes took, % of all CPUs'
    load1: float | None = None  # the 1-minute load average at the end
    energy: Energy | None = None
    busy_not_judged: str | None = None  # why busy was not judged (a served model)
    cooldown_s: float | None = None
    waited_for_quiet_s: float | None = None  # None: the suite set no wait_for_quiet_s
    quiet: bool | None = None  # the other processes went quiet within the wait

    def waits_s(self) -> float:
        """The cooldown and the wait for quiet before the case, seconds."""
        waits = (self.cooldown_s, self.waited_for_quiet_s)
        return sum(w for w in waits if w is not None and math.isfinite(w) and w > 0)


@dataclass(frozen=True)
class CaseArtifacts(ScenarioArtifacts):
    repeats: RecordedStop | None = None
    timing: Timing | None = None
    machine_state: MachineStateRecord | None = None
