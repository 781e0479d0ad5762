"""Machine state: what the machine was doing while each case was measured, and which cases'
samples cannot be trusted (busy, throttled, on battery, Low Power Mode, memory pressure,
swapping), as the worker recorded it (:mod:`harness.runner.sample_guard`).

The section lists the cases measured on a dirty machine first, with why; the terminal gets one
line when there are any (:func:`machine_lines`), and the report's Summary a banner
(:func:`busy_banner`). A case whose gate missed on a busy machine and was measured again once it
was quiet (:mod:`harness.runner.remeasure`) says so in its row's "why" and in a terminal line of
its own (``machine: 1 case missed a gate on a busy machine: 1 re-measured once quiet ...``).
Load only slows a run, so of their gates only a floor on a rate or a ceiling on a time that
passed counts (it would pass on a quiet machine too); the others were not
judged, and compare calls them not comparable, unless the run said ``--allow-dirty-machine``
(:mod:`harness.runner.judge`).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.types import CaseResult, RunRecord
from harness.report.escape import plain
from harness.report.formatting import MISSING
from harness.report.sections import CLOSING, Section
from harness.report.table import Cell, Column, Table
from harness.results.machine_flags import (
    dirty_line,
    dirty_reasons,
    flagged_runs,
    remeasured,
)
from harness.runner.case_artifacts import CaseArtifacts, MachineStateRecord

SHOWN = 3  # dirty cases named on the terminal line


@dataclass(frozen=True)
class MachineStates:
    table: Table
    measured: int  # cases with a recorded state
    dirty: int
    state_line: str  # the machine as the first case found it: governor, clock, heat, power


def _state(result: CaseResult) -> MachineStateRecord | None:
    return CaseArtifacts.of(result).machine_state


def _pct(value: float | None) -> Cell:
    return Cell(MISSING) if value is None else Cell(f"{value:.0f}%", sort=value)


def _why(result: CaseResult, state: MachineStateRecord) -> str:
    """Why the samples cannot be trusted (or why busy is not judged), then the re-measure."""
    reasons = dirty_reasons(result)
    why = dirty_line(reasons) if reasons else state.busy_not_judged or ""
    again = remeasured(result)
    if again is None:
        return why
    if not again.quiet:  # these are still the first measurement's samples
        return f"{why}; {again.line(())}"
    return f"{again.line(reasons)}; the first measurement: {dirty_line(again.first_dirty)}"


def _row(result: CaseResult, state: MachineStateRecord) -> tuple[Cell, ...]:
    reasons = dirty_reasons(result)
    per_token = state.energy.joules_per_token if state.energy is not None else None
    load = state.load1
    runs = flagged_runs(result)
    return (
        Cell(result.case_id),
        Cell("dirty", css="st-failed") if reasons else Cell("clean", css="st-passed"),
        _pct(state.others_pct),
        Cell(MISSING) if load is None else Cell(f"{load:.1f}", sort=load),
        Cell(", ".join(str(n) for n in runs) if runs else MISSING),
        Cell(MISSING) if per_token is None else Cell(f"{per_token:.3g} J", sort=per_token),
        Cell(_why(result, state)),
    )


def _waited(state: MachineStateRecord) -> Cell:
    """How long the case waited for other processes to go quiet, and whether they did."""
    waited = state.waited_for_quiet_s
    if waited is None:
        return Cell(MISSING)
    outcome = "quiet" if state.quiet is True else "still busy"
    return Cell(f"{waited:.1f} s ({outcome})", sort=waited)


def _state_line(state: MachineStateRecord) -> str:
    before = state.before
    if before is None:
        return ""
    parts = []
    mhz, top = before.cpu_mhz, before.cpu_max_mhz
    if mhz is not None:
        parts.append(f"CPU {mhz:.0f} MHz" + (f" of {top:.0f}" if top is not None else ""))
    if before.governor is not None:
        parts.append(f"governor {before.governor}")
    if before.cpu_speed_limit_pct is not None:
        parts.append(f"CPU speed limit {before.cpu_speed_limit_pct:.0f}%")
    if before.hottest_c is not None:
        parts.append(f"hottest {before.hottest_c:.0f} °C")
    if before.on_battery is not None:
        parts.append("on battery" if before.on_battery else "on mains power")
    if before.low_power_mode is True:
        parts.append("Low Power Mode")
    if before.swap_used_bytes is not None:
        parts.append(f"swap in use {before.swap_used_bytes / 2**20:.0f} MiB")
    if before.memory_pressure is not None:
        parts.append(f"memory pressure {before.memory_pressure}")
    return " · ".join(parts)


def build(run: RunRecord) -> MachineStates | None:
    found = [(r, s) for r in run.results if (s := _state(r)) is not None]
    if not found:
        return None
    found.sort(key=lambda pair: not dirty_reasons(pair[0]))  # dirty first, else run order
    columns: tuple[Column, ...] = (
        Column("case"),
        Column("machine", css="nowrap"),
        Column(
            "other processes", numeric=True, title="CPU time other processes took, % of all CPUs'"
        ),
        Column("load", numeric=True, title="1-minute load average at the end (counts the model)"),
        Column("flagged runs", title="measured runs taken while other processes were busy"),
        Column("energy/token", numeric=True, title="package energy (RAPL) per generated token"),
        Column("why"),
    )
    rows = tuple(_row(r, s) for r, s in found)
    if any(s.waited_for_quiet_s is not None for _, s in found):  # the suite's wait_for_quiet_s
        title = "before the case, the wait for other processes to go quiet (wait_for_quiet_s)"
        columns = (
            *columns[:-1],
            Column("waited for quiet", numeric=True, title=title),
            columns[-1],
        )
        rows = tuple(
            (*row[:-1], _waited(s), row[-1]) for row, (_, s) in zip(rows, found, strict=True)
        )
    dirty = sum(1 for r, _ in found if dirty_reasons(r))
    return MachineStates(Table(columns, rows), len(found), dirty, _state_line(found[-1][1]))


def machine_lines(run: RunRecord) -> list[str]:
    """``machine: 2 of 8 cases measured on a dirty machine: their gates not judged (first: ...)``,
    or nothing when every case was measured on a clean machine; before it, the waits for quiet
    and the re-measures of misses on a busy machine."""
    lines = [*_wait_lines(run), *_remeasure_lines(run)]
    dirty = [(r.case_id, dirty_reasons(r)) for r in run.results if dirty_reasons(r)]
    if not dirty:
        return lines
    measured = sum(1 for r in run.results if _state(r) is not None)
    case_id, reasons = dirty[0]
    return [
        *lines,
        f"machine: {len(dirty)} of {measured} cases measured on a dirty machine "
        f"(first: {plain(case_id)}: {plain(dirty_line(reasons), 200)})",
    ]


def _wait_lines(run: RunRecord) -> list[str]:
    """``machine: waited for quiet before 3 cases, 42 s in all; 1 still busy after its wait``."""
    waits = [
        (waited, state.quiet is True)
        for r in run.results
        if (state := _state(r)) is not None and (waited := state.waited_for_quiet_s) is not None
    ]
    if not waits:
        return []
    busy = sum(1 for _, quiet in waits if not quiet)
    return [
        f"machine: waited for quiet before {len(waits)} cases, {sum(w for w, _ in waits):.0f} s "
        f"in all; {busy} still busy after the wait (wait_for_quiet_s)"
    ]


def _remeasure_lines(run: RunRecord) -> list[str]:
    """``machine: 2 cases missed a gate on a busy machine: 1 re-measured once quiet, 1 still
    busy after the wait (first: CASE: re-measured once quiet (waited 4.2 s))``."""
    found = [(r, again) for r in run.results if (again := remeasured(r)) is not None]
    if not found:
        return []
    quiet = sum(1 for _, again in found if again.quiet)
    counts = ", ".join(
        part
        for n, part in (
            (quiet, f"{quiet} re-measured once quiet"),
            (len(found) - quiet, f"{len(found) - quiet} still busy after the wait, not judged"),
        )
        if n
    )
    first, again = found[0]
    cases = "case" if len(found) == 1 else "cases"
    line = again.line(dirty_reasons(first) if again.quiet else ())
    return [
        f"machine: {len(found)} {cases} missed a gate on a busy machine: {counts} "
        f"(first: {plain(first.case_id)}: {plain(line, 200)})"
    ]


def busy_banner(run: RunRecord) -> str | None:
    """The Summary's banner when cases were measured on a dirty machine: how many, the first
    with why, and what became of their gates; None when every case was measured on a clean
    one."""
    dirty = [r for r in run.results if dirty_reasons(r)]
    if not dirty:
        return None
    measured = sum(1 for r in run.results if _state(r) is not None)
    gates = [g for r in dirty for g in r.gates]
    counts = (
        (sum(1 for g in gates if g.passed is True), "passed"),
        (sum(1 for g in gates if g.passed is False), "FAILED"),
        (sum(1 for g in gates if g.passed is None), "not judged"),
    )
    text = (
        f"{len(dirty)} of {measured} cases were measured on a dirty machine (first: "
        f"{dirty[0].case_id}: {dirty_line(dirty_reasons(dirty[0]))})."
    )
    if gates:
        text += (
            f" Their gates: {', '.join(f'{n} {word}' for n, word in counts if n)} (load only "
            "slows a run: a floor on a rate or a ceiling on a time that passes holds; other "
            "gates there are not judged)."
        )
    return text + " They are not compared with a baseline; see Machine state."


SECTION = Section("machine_state", "Machine state", build, order=CLOSING + 30)
