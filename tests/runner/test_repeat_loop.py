"""repeats: fixed or auto; the stop reasons, the merge of batches, the headline metrics."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.core.metrics import MetricSpec
from harness.core.types import AutoRepeats, Metric, Status, Unit
from harness.runner.active_run import ActiveRun
from harness.runner.repeat_loop import RepeatStop, headline_names, merge, run_repeats
from harness.runner.repeat_progress import RepeatCounter, RepeatProgress
from harness.scenarios.base import ScenarioOutput
from harness.scenarios.throughput import SCENARIO as THROUGHPUT
from tests.runner.cases import path_case

DECODE = "throughput.decode_tps"


@dataclass
class FakeScenario:
    """Each measured run gives the next value of ``values``; a run takes ``run_s`` seconds of a
    fake clock. Records every (warmup, repeats) call."""

    values: Iterator[float]
    run_s: float = 1.0
    now: float = 0.0
    calls: list[tuple[int, int]] = field(default_factory=list)
    fail: bool = False

    def clock(self) -> float:
        return self.now

    def __call__(self, warmup: int, repeats: int) -> ScenarioOutput:
        self.calls.append((warmup, repeats))
        self.now += self.run_s * (warmup + repeats)
        samples = tuple(next(self.values) for _ in range(repeats))
        metrics = (
            Metric(DECODE, Unit.TOKENS_PER_SECOND, samples, (1.0,) * warmup),
            Metric("throughput.decode_hw_ceiling_tps", Unit.TOKENS_PER_SECOND, (500.0,)),
        )
        artifacts = {"generated_tokens": [4] * repeats, "prompt_tokens": 8}
        return ScenarioOutput(metrics, artifacts, failures=("bad",) if self.fail else ())


def steady(value: float = 100.0) -> Iterator[float]:
    while True:
        yield value


def alternating(low: float, high: float) -> Iterator[float]:
    while True:
        yield low
        yield high


AUTO = AutoRepeats(min_repeats=6, max_repeats=12, rel_ci=0.02, budget_s=100.0)

# (values, run_s, auto, runs taken, reason starts with)
STOPS = [
    (steady(), 1.0, AUTO, 6, "ci 0.0% <= 2%"),
    (alternating(90.0, 110.0), 1.0, AUTO, 12, "max repeats 12 reached, ci 20.0%"),
    (alternating(90.0, 110.0), 10.0, AUTO, 8, "budget 100 s spent (90 s measured"),
    # a single run would overshoot the budget: the minimum is still taken
    (alternating(90.0, 110.0), 30.0, AUTO, 6, "budget 100 s spent"),
]


@pytest.mark.parametrize(("values", "run_s", "auto", "taken", "reason"), STOPS)
def test_auto_stops_and_says_why(
    values: Iterator[float], run_s: float, auto: AutoRepeats, taken: int, reason: str
) -> None:
    fake = FakeScenario(values, run_s)
    output, stop = run_repeats(fake, auto.min_repeats, 1, auto, (DECODE,), clock=fake.clock)
    assert stop.mode == "auto"
    assert stop.taken == taken
    assert stop.reason is not None and stop.reason.startswith(reason), stop.reason
    decode = output.metrics[0]
    assert len(decode.samples) == taken
    assert decode.warmup_samples == (1.0,)  # warm-ups once, before the first batch only
    assert fake.calls == [(1, 6)] + [(0, 1)] * (taken - 6)


def test_ci_target_reached_after_more_runs() -> None:
    """Six runs spread too wide, then steady runs: it stops once the median's 95% interval
    leaves out the two lowest and two highest runs (from 12 runs on)."""
    values = iter([80.0, 120.0, 90.0, 110.0, 100.0, 100.0, *([100.0] * 40)])
    fake = FakeScenario(values)
    auto = AutoRepeats(min_repeats=6, max_repeats=20, rel_ci=0.02, budget_s=100.0)
    _, stop = run_repeats(fake, 6, 0, auto, (DECODE,), clock=fake.clock)
    assert stop.taken == 12
    assert stop.reason == "ci 0.0% <= 2%"
    assert stop.rel_ci[DECODE] == 0.0


def test_per_case_constants_and_lists_merge_right() -> None:
    fake = FakeScenario(alternating(90.0, 110.0))
    output, stop = run_repeats(fake, 6, 0, AUTO, (DECODE,), clock=fake.clock)
    ceiling = output.metrics[1]
    assert ceiling.samples == (500.0,)  # one value for the whole case: not repeated
    assert output.artifacts["generated_tokens"] == [4] * stop.taken  # one per run: appended
    assert output.artifacts["prompt_tokens"] == 8
    assert set(stop.cv) == {DECODE, "throughput.decode_hw_ceiling_tps"}
    assert stop.cv["throughput.decode_hw_ceiling_tps"] is None  # one sample: no spread


def test_fixed_runs_once_and_reports_noise() -> None:
    fake = FakeScenario(alternating(90.0, 110.0))
    _, stop = run_repeats(fake, 5, 1, None, (DECODE,), clock=fake.clock)
    assert fake.calls == [(1, 5)]
    assert (stop.mode, stop.taken, stop.reason) == ("fixed", 5, None)
    assert stop.cv[DECODE] == pytest.approx(0.1118, abs=1e-3)
    assert stop.to_json()["rel_ci"] == {DECODE: None}  # 5 samples: no 95% interval yet


@pytest.mark.parametrize(
    ("fail", "applies", "mode", "reason"),
    [
        (True, True, "auto", "the case did not pass: no more runs"),
        (False, False, "not_applicable", "repeats do not apply to this scenario: ran once"),
    ],
)
def test_auto_runs_once_when_more_runs_cannot_help(
    fail: bool, applies: bool, mode: str, reason: str
) -> None:
    fake = FakeScenario(alternating(90.0, 110.0), fail=fail)
    _, stop = run_repeats(fake, 6, 0, AUTO, (DECODE,), applies=applies, clock=fake.clock)
    assert fake.calls == [(0, 6)]
    assert (stop.mode, stop.reason) == (mode, reason)


@pytest.mark.parametrize(
    ("auto", "expected"),
    [
        (None, [RepeatProgress(6, 6, tokens=24)]),
        (
            AutoRepeats(min_repeats=6, max_repeats=8, rel_ci=0.02, budget_s=100.0),
            [RepeatProgress(n, 8, auto=True, tokens=t) for n, t in ((6, 24), (7, 4), (8, 4))],
        ),
    ],
    ids=["fixed", "auto"],
)
def test_a_silent_scenario_gets_a_progress_message_per_batch(
    auto: AutoRepeats | None, expected: list[RepeatProgress]
) -> None:
    """The fake scenario never calls ``run_done``: the loop still tells each batch's end."""
    fake = FakeScenario(alternating(90.0, 110.0))
    seen: list[RepeatProgress] = []
    counter = RepeatCounter(seen.append, auto.max_repeats if auto else 6, auto=auto is not None)
    run_repeats(fake, 6, 1, auto, (DECODE,), clock=fake.clock, counter=counter)
    assert seen == expected


def test_no_headline_metric_stops_after_the_minimum() -> None:
    fake = FakeScenario(alternating(90.0, 110.0))
    _, stop = run_repeats(fake, 6, 0, AUTO, ("other.metric",), clock=fake.clock)
    assert (stop.taken, stop.reason) == (6, "no headline metric measured: no more runs")


def test_merge_keeps_the_first_skip_and_every_failure() -> None:
    first = ScenarioOutput((), failures=("a",), skip_reason="why")
    more = ScenarioOutput((), failures=("a", "b"))
    merged = merge(first, more, (set(), set()))
    assert merged.failures == ("a", "b")
    assert merged.skip_reason == "why"


def test_headline_metrics() -> None:
    assert headline_names(THROUGHPUT) == (
        "throughput.prefill_tps",
        DECODE,
        "throughput.decode_hw_ceiling_tps",
        "throughput.prefill_hw_ceiling_tps",
    )  # the ceilings have one value per case and are left out when judging

    class Declared:
        headline_metrics = ("x.y",)
        metrics = (MetricSpec("x.z", Unit.TOKENS_PER_SECOND, True, ""),)

    assert headline_names(Declared()) == ("x.y",)


def test_stop_to_json() -> None:
    stop = RepeatStop("auto", 7, "ci 1.6% <= 2%", {DECODE: 0.016}, {DECODE: 0.01}, 0.02)
    assert stop.to_json() == {
        "mode": "auto",
        "taken": 7,
        "reason": "ci 1.6% <= 2%",
        "rel_ci": {DECODE: 0.016},
        "cv": {DECODE: 0.01},
        "rel_ci_target": 0.02,
    }


def test_worker_repeats_auto_and_records_why_and_its_timing(tmp_path: Path) -> None:
    """Through a real worker (fake backend): the record holds the stop and the backend time."""
    model = write_fake_model(tmp_path / "m")
    auto = AutoRepeats(min_repeats=2, max_repeats=3, rel_ci=1e-9, budget_s=60.0)
    case = dataclasses.replace(
        path_case(model, "m", "throughput", {"prompt_tokens": 8, "gen_tokens": 4}, backend="fake"),
        repeats=auto.min_repeats,
        warmup=1,
        auto_repeats=auto,
    )
    session = ActiveRun(tmp_path / "reports", [], run_id="r1")
    seen: list[RepeatProgress] = []
    try:
        result = session.run_case(case, seen.append)
    finally:
        session.close_worker()
    assert result.status is Status.PASSED, result.reason
    assert seen == [  # each run as it ends: the warm-up, then measured runs of at most 3
        RepeatProgress(1, 1, warmup=True, auto=True, tokens=4),
        *(RepeatProgress(i, 3, warmup=False, auto=True, tokens=4) for i in (1, 2, 3)),
    ]
    stop = result.artifacts["repeats"]
    assert isinstance(stop, dict)
    assert stop["mode"] == "auto" and stop["taken"] == 3
    assert str(stop["reason"]).startswith("max repeats 3 reached, ci ")
    decode = result.metric(DECODE)
    assert decode is not None and len(decode.samples) == 3
    timing = result.artifacts["timing"]
    assert isinstance(timing, dict)
    assert timing["load_s"] > 0 and 0 < timing["scenario_s"] < result.duration_s
