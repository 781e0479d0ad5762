"""The harness's overhead: time outside backend calls, per run, in the header."""

from __future__ import annotations

import dataclasses

import pytest
from report_fixtures import case, make_run

from harness.core.types import CaseResult, Status
from harness.report import header
from harness.report.overhead import overhead


def timed(
    duration_s: float, load_s: float, scenario_s: float, **machine_state: object
) -> CaseResult:
    result = case("m", "throughput", duration_s=duration_s)
    timing = {"load_s": load_s, "scenario_s": scenario_s}
    artifacts: dict[str, object] = {"timing": timing}
    if machine_state:
        artifacts["machine_state"] = machine_state
    return dataclasses.replace(result, artifacts=artifacts)


# (cases, share of case time outside backend calls, text the line holds)
CASES = [
    ([timed(10.0, 2.0, 7.8)], 0.02, "2.0% (goal under 2%): 0.2 s of 10.0 s"),
    # waits the suite asked for (cooldown, a quiet machine) are apart, never overhead
    (
        [timed(13.5, 2.0, 7.8, waited_for_quiet_s=1.5, quiet=True, cooldown_s=2.0)],
        0.02,
        "2.0% (goal under 2%): 0.2 s of 10.0 s of case time outside backend calls (loads 2.0 s, "
        "scenarios 7.8 s); 3.5 s of waits (cooldown, quiet machine) apart",
    ),
    # unreadable waits count as nothing: the share can only look worse, never better
    ([timed(10.0, 2.0, 7.8, waited_for_quiet_s="1 s", cooldown_s=float("nan"))], 0.02, "0.2 s"),
    (
        [timed(10.0, 4.0, 0.0), timed(10.0, 0.0, 10.0)],
        0.30,
        "30.0% (goal under 2%) ⚠ above the goal",
    ),
    # a case skipped before any worker started: all of its time is the harness's
    ([timed(10.0, 0.0, 10.0), case("m", "load", duration_s=1.0)], 1 / 11, "1.0 s of 11.0 s"),
    # a backend's time cannot exceed the wall time it ran in: clock skew reads as 0
    ([timed(1.0, 0.5, 0.6)], 0.0, "0.0% (goal under 2%)"),
    # a timed-out case: its worker was stopped, its backend time unknown: left out, not 89%
    (
        [timed(10.0, 2.0, 7.8), case("m", "load", Status.TIMED_OUT, duration_s=300.0)],
        0.02,
        "0.2 s of 10.0 s of case time outside backend calls (loads 2.0 s, scenarios 7.8 s); "
        "1 timed-out or crashed cases left out (backend time unknown)",
    ),
]


@pytest.mark.parametrize(("results", "share", "says"), CASES)
def test_overhead_share_and_line(results: list[CaseResult], share: float, says: str) -> None:
    spent = overhead(make_run(results))
    assert spent is not None
    assert spent.share == pytest.approx(share)
    assert says in spent.line()


def test_overhead_of_the_whole_run_counts_between_cases() -> None:
    spent = overhead(make_run([timed(100.0, 10.0, 85.0)]))  # the run lasted 205 s
    assert spent is not None and spent.run_s == 205.0
    assert spent.run_share == pytest.approx(1 - 95 / 205)
    assert "53.7% of the run's 205 s wall time" in spent.line()
    unfinished = overhead(make_run([timed(100.0, 10.0, 85.0)], finished=False))
    assert unfinished is not None and unfinished.run_share is None


@pytest.mark.parametrize(
    "artifacts",
    [
        {},
        {"timing": "3 s"},
        {"timing": {"load_s": 1.0}},
        {"timing": {"load_s": None, "scenario_s": 1}},
    ],
)
def test_no_overhead_without_backend_timings(artifacts: dict[str, object]) -> None:
    result = dataclasses.replace(case("m", "throughput"), artifacts=artifacts)
    assert overhead(make_run([result])) is None
    assert "harness overhead" not in dict(header.build(make_run([result])).run_rows)


def test_the_runs_share_leaves_the_waits_out_too() -> None:
    spent = overhead(make_run([timed(105.0, 10.0, 85.0, waited_for_quiet_s=5.0, quiet=True)]))
    assert spent is not None and spent.run_s == 205.0 and spent.waits_s == 5.0
    assert spent.run_share == pytest.approx(1 - 95 / 200)


def test_header_shows_the_overhead() -> None:
    rows = dict(header.build(make_run([timed(10.0, 2.0, 7.8)])).run_rows)
    assert rows["harness overhead"].startswith("2.0% (goal under 2%)")
