"""The harness's own share of a run: time outside backend calls vs wall time.

Each case run in a worker records in its ``timing`` artifact the seconds spent inside backend
calls: the model's load (on the case that loaded it) and the scenario's runs. The rest of a
case's wall time (``duration_s``: starting the worker process, probe and policy, the request
and reply, judging) is the harness's overhead. The run's wall time (its start and finish
stamps, to the second) also counts what lies between cases (planning, writing the record).
A case that timed out or crashed is left out: its worker was stopped or died, so how long it
spent inside the backend is unknown (counting its wall time as the harness's would read a
timeout as 89% overhead).

Waits are apart: a case's ``cooldown_s`` and its wait for a quiet machine (``wait_for_quiet_s``,
at least one quiet window of a second even on an idle machine) are time the suite asked for,
read from the case's ``machine_state`` artifact; so is the wait for quiet before a re-measure of
a miss on a busy machine (its ``remeasure`` artifact, :mod:`harness.runner.remeasure`). They are
shown next to the share, never in it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from harness.core.types import CaseResult, RunRecord, Status
from harness.results.machine_flags import remeasured
from harness.runner.case_artifacts import CaseArtifacts, MachineStateRecord

GOAL = 0.02  # models loaded once per worker: the harness should take under 2%


@dataclass(frozen=True)
class Overhead:
    load_s: float  # inside backend loads
    scenario_s: float  # inside the scenarios' runs
    cases_s: float  # wall time of every case
    run_s: float | None  # the run's wall time (None: not finished or stamps unreadable)
    left_out: int = 0  # timed-out or crashed cases: their time inside the backend is unknown
    waits_s: float = 0.0  # cooldowns and waits for a quiet machine: asked for, not overhead

    @property
    def backend_s(self) -> float:
        return self.load_s + self.scenario_s

    @property
    def spent_s(self) -> float:
        """The cases' wall time less their waits: what backend calls and the harness took."""
        return max(self.cases_s - self.waits_s, 0.0)

    @property
    def share(self) -> float:
        """Share of the cases' wall time, waits left out, spent outside backend calls."""
        return max(0.0, 1 - self.backend_s / self.spent_s) if self.spent_s > 0 else math.nan

    @property
    def run_share(self) -> float | None:
        """The same over the run's wall time (between cases too), waits left out."""
        if self.run_s is None or self.run_s - self.waits_s <= 0:
            return None
        return max(0.0, 1 - self.backend_s / (self.run_s - self.waits_s))

    def line(self) -> str:
        """``1.1% (goal under 2%): 1.6 s of 150.4 s of case time outside backend calls (loads
        12.0 s, scenarios 136.8 s); 8.2 s of waits (cooldown, quiet machine) apart; 2.0% of the
        run's 159 s wall time``."""
        flag = "" if self.share <= GOAL else " ⚠ above the goal"
        text = (
            f"{self.share:.1%} (goal under {GOAL:.0%}){flag}: "
            f"{max(self.spent_s - self.backend_s, 0.0):.1f} s of {self.spent_s:.1f} s of case "
            f"time outside backend calls (loads {self.load_s:.1f} s, scenarios "
            f"{self.scenario_s:.1f} s)"
        )
        if self.waits_s > 0:
            text += f"; {self.waits_s:.1f} s of waits (cooldown, quiet machine) apart"
        run_share = self.run_share
        if run_share is not None and self.run_s is not None and not self.left_out:
            text += f"; {run_share:.1%} of the run's {self.run_s:.0f} s wall time"
        if self.left_out:
            text += f"; {self.left_out} timed-out or crashed cases left out (backend time unknown)"
        return text


def _seconds(started: str, finished: str | None) -> float | None:
    try:
        start, end = datetime.fromisoformat(started), datetime.fromisoformat(finished or "")
        return (end - start).total_seconds()
    except (TypeError, ValueError):  # unreadable, or naive against aware
        return None


def overhead(run: RunRecord) -> Overhead | None:
    """The run's overhead; None when no case says how long its backend calls took."""
    load = scenario = cases = waits = 0.0
    found = False
    left_out = 0
    for result in run.results:
        if result.status in (Status.TIMED_OUT, Status.CRASHED):
            left_out += 1
            continue
        cases += result.duration_s  # a case skipped before its worker: all of it is overhead
        waits += _waits_s(result)
        timing = CaseArtifacts.of(result).timing
        if timing is None or not timing.known:
            continue
        found = True
        load += timing.load_s or 0.0
        scenario += timing.scenario_s or 0.0
    if not found:
        return None
    return Overhead(
        load, scenario, cases, _seconds(run.started_at, run.finished_at), left_out, waits
    )


def _waits_s(result: CaseResult) -> float:
    """The case's cooldown and wait for quiet, as its worker recorded them, and the wait for
    quiet before a re-measure (0 when none)."""
    again = remeasured(result)
    states = [CaseArtifacts.of(result).machine_state]
    total = 0.0
    if again is not None:  # the wait before it, and the first measurement's own waits
        first = MachineStateRecord.from_record(again.first_state or {})
        total, states = again.waited_s, [*states, first]
    return total + sum(s.waits_s() for s in states if s is not None)
