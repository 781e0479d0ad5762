"""A miss measured on a busy machine is measured once more, once the machine is quiet (issue 37).

Load only slows a run, so the judge leaves a gate that misses (or cannot decide) on a busy
machine not judged (:mod:`harness.runner.judge`). When every reason the samples cannot be trusted
is that other processes took the CPU (what a wait can end: not a battery, nor a throttle) and a
gate missed there (:func:`harness.runner.judge.busy_misses`), the run measures the case once
more: it waits for a quiet second, up to the case's ``wait_for_quiet_s`` (:data:`WAIT_S` when
the suite sets none: :func:`wait_bound`), and when quiet came it measures the case again in the
same worker and judges the new samples, by the same rules (busy again: by direction again).
When the wait runs out, the case keeps its first measurement, not judged, and says so. At most
once a case; never for a case that passed, failed on a quiet machine, or ran with
``--allow-dirty-machine``.

It is shown wherever the gate is: each missed gate's message ends with the re-measure
(``; re-measured once quiet (waited 4.2 s)``, ``; not re-measured: still busy after the 60 s
wait for quiet``), and the record keeps the first measurement in the case's ``remeasure``
artifact (:class:`harness.results.machine_flags.Remeasure`).

The machine is read through :class:`MachineWatch`, so tests script it (no test depends on the
test machine's real load): :class:`LiveMachine` is the machine as the worker recorded it, and
the wait the harness's own :class:`~harness.runner.sample_guard.SampleGuard` makes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from harness.core.types import Case, Gate, GateResult, Metric
from harness.results.machine_flags import ARTIFACT, Remeasure

WAIT_S = 60.0  # the most a re-measure waits for quiet when the suite sets no wait_for_quiet_s


@dataclass(frozen=True)
class QuietWait:
    """How a wait for quiet ended: ``quiet`` (else the bound ran out) after ``waited_s``."""

    quiet: bool
    waited_s: float


class MachineWatch(Protocol):
    """What the run knows of the machine around a measurement."""

    def wait_for_quiet(self, bound_s: float) -> QuietWait:
        """Wait up to ``bound_s`` for a second in which other processes leave the CPU."""
        ...

    def measured(self, artifacts: dict[str, Any]) -> dict[str, Any]:
        """A measurement's artifacts, with the machine's state while it was taken."""
        ...


class LiveMachine:
    """The machine itself: the state the worker recorded, and a real wait (other processes
    against this process's tree: the harness, its worker and any server it started)."""

    def wait_for_quiet(self, bound_s: float) -> QuietWait:
        from harness.runner.sample_guard import SampleGuard, cpu_reading

        guard = SampleGuard(partial(cpu_reading, os.getpid()))
        guard.settle(0.0, bound_s)
        return QuietWait(guard.quiet is True, guard.waited_s)

    def measured(self, artifacts: dict[str, Any]) -> dict[str, Any]:
        return artifacts


def wait_bound(case: Case) -> float:
    """The most seconds a re-measure of ``case`` waits for quiet: its ``wait_for_quiet_s``, or
    :data:`WAIT_S` when the suite sets none."""
    return case.wait_for_quiet_s if case.wait_for_quiet_s > 0 else WAIT_S


def record(
    wait: QuietWait,
    bound_s: float,
    artifacts: Mapping[str, Any],
    metrics: tuple[Metric, ...],
    gates: tuple[GateResult, ...],
) -> Remeasure:
    """The ``remeasure`` artifact: the wait, and, when quiet came and the case is measured
    again, the first measurement (the machine's state it was taken in, from its ``artifacts``;
    its samples; its gates as judged there). When the wait ran out the first measurement is the
    result's own: not kept twice."""
    if not wait.quiet:
        return Remeasure(wait.waited_s, bound_s, False, {}, {}, ())
    state = artifacts.get(ARTIFACT)
    return Remeasure(
        wait.waited_s,
        bound_s,
        True,
        dict(state) if isinstance(state, Mapping) else {},
        {m.name: m.samples for m in metrics},
        tuple(g.message for g in gates),
    )


def notes(
    misses: tuple[Gate, ...],
    done: Remeasure,
    again: tuple[str, ...],
    first: tuple[GateResult, ...],
    metrics: tuple[Metric, ...],
) -> Mapping[Gate, str]:
    """What each missed gate's message ends with (``again``: why the second measurement cannot
    be trusted either, empty when it can); once re-measured, with what the gate measured the
    first time (``first``, on ``metrics``): ``re-measured once quiet (waited 4.2 s; first
    measured 650 tok/s on a busy machine)``."""
    units = {m.name: m.unit.value for m in metrics}
    measured = {g.gate: g.measured for g in first}
    out = {}
    for gate in misses:
        value = measured.get(gate)
        said = ""
        if value is not None:
            unit = units.get(gate.metric, "")
            said = f"first measured {value:.4g} {unit}".rstrip() + " on a busy machine"
        out[gate] = done.line(again, said)
    return out
