"""The stall scenario: the stall read from token arrival times (baseline, window, max ITL,
tokens lost, the one line), and whole runs against a test server whose prefill stops every
running stream (planted) and one whose prefill runs beside them."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from harness.backends.base import LoadInfo
from harness.backends.http import ServedModel
from harness.backends.openai_client import Endpoint
from harness.scenarios import SCENARIOS
from harness.scenarios.base import ScenarioContext
from harness.scenarios.stall import StallParams
from harness.scenarios.stall.analysis import StreamTokens, finding, stall, timeline
from tests.servers.shaped_openai import Shape, shaped_server


def steady(
    begin: float, end: float, itl: float, pause: tuple[float, float] | None = None
) -> StreamTokens:
    """One token every ``itl`` seconds from ``begin`` to ``end``, none during ``pause``."""
    times, t = [], begin
    while t <= end + 1e-9:
        if pause is None or not pause[0] < t < pause[1]:
            times.append(round(t, 6))
        t += itl
    if pause is not None:
        times = sorted({*times, pause[1]})
    return StreamTokens(tuple(times), tuple(1 for _ in times))


def test_a_stall_is_measured_from_arrival_times() -> None:
    # two streams at 10 ms a token; the long prompt arrives at 1.0 s and prefills until 1.5 s,
    # every stream stopped meanwhile
    streams = [steady(0.0, 3.0, 0.01, pause=(1.0, 1.5)), steady(0.005, 3.0, 0.01, pause=(1.0, 1.5))]
    found = stall(streams, 1.0, 1.5, factor=5, min_stall_s=0.05)
    assert found.baseline_itl_s == pytest.approx(0.01)
    assert found.max_itl_s == pytest.approx(0.5, abs=0.011)
    assert found.stall_s == pytest.approx(0.49, abs=0.011)
    assert found.running == 2 and found.stalled
    assert found.tokens_lost == pytest.approx(98, abs=2)  # 2 streams x 0.5 s / 10 ms, less 2
    line = finding(found, 2048, 2)
    assert line.startswith("stall: 2 running streams stopped 0.5") and "2048-token prompt" in line


def test_streams_that_go_on_are_no_stall() -> None:
    streams = [steady(0.0, 3.0, 0.01), steady(0.005, 3.0, 0.01)]
    found = stall(streams, 1.0, 1.5, factor=5, min_stall_s=0.05)
    assert not found.stalled and found.tokens_lost == 0
    assert found.p99_itl_s == pytest.approx(0.01)  # 100 gaps in the window: a p99
    assert finding(found, 2048, 2).startswith("no stall: max ITL 0.01 s (1.0x the 0.01 s")


@pytest.mark.parametrize(
    ("factor", "min_stall_s", "stalled"),
    [(5, 0.05, True), (60, 0.05, False), (5, 1.0, False)],
)
def test_a_stall_needs_both_the_factor_and_the_least_time(
    factor: float, min_stall_s: float, stalled: bool
) -> None:
    streams = [steady(0.0, 3.0, 0.01, pause=(1.0, 1.5))]
    assert stall(streams, 1.0, 1.5, factor, min_stall_s).stalled is stalled


def test_the_timeline_is_around_the_arrival() -> None:
    streams = [steady(0.0, 3.0, 0.01, pause=(1.0, 1.5))]
    (points,) = timeline(streams, 1.0, 1.5, margin_s=0.1)
    assert points[0][0] >= -0.1 and points[-1][0] <= 0.6
    assert max(itl for _, itl in points) == pytest.approx(0.5, abs=0.011)


def test_params_leave_room_after_the_arrival() -> None:
    with pytest.raises(ValidationError, match="stream_max_tokens 16 leaves too little"):
        StallParams.model_validate({"stream_max_tokens": 16, "arrive_after_tokens": 8})


# -- whole runs ------------------------------------------------------------------------------


def run_stall(shape: Shape, params: dict[str, Any]) -> Any:
    base = {"streams": 3, "stream_max_tokens": 64, "long_prompt_tokens": 1000}
    scenario = SCENARIOS.get("stall")
    with shaped_server(shape) as url:
        model = ServedModel(Endpoint(url), "url", None)
        info = LoadInfo(0.0, 0, "http:url")
        ctx = ScenarioContext(model, info, 1, 1, lambda: (model, info), backend="http")
        return scenario.run(ctx, scenario.params_model.model_validate({**base, **params}))


def test_a_planted_stall_is_caught_and_named_in_one_line() -> None:
    # the planted server's prefill (3 ms a prompt word: about 2 s) holds every decode step
    out = run_stall(
        Shape(token_s=0.05, prefill_s_per_word=0.003, stall=True),
        {"min_stall_s": 0.5, "max_stall_s": 1.0},
    )
    (line,) = out.failures
    assert line.startswith("stall: 3 running streams stopped ") and "\n" not in line
    assert "-token prompt arrived" in line and out.artifacts["stalled"]
    metrics = {m.name: m.samples[0] for m in out.metrics}
    # the streams stopped at least as long as the prefill slept (a lower bound: no timing)
    long_ttft = metrics["stall.long_ttft_s"]
    assert long_ttft >= 1.5 and metrics["stall.max_itl_s"] >= 1.5
    assert metrics["stall.tokens_lost"] > 0
    assert len(out.artifacts["timeline"]) == 3


def test_a_prefill_beside_decode_is_no_stall() -> None:
    # the same prefill beside decode: the streams go on at 50 ms a token (a stall needs 0.5 s)
    out = run_stall(
        Shape(token_s=0.05, prefill_s_per_word=0.003, stall=False),
        {"min_stall_s": 0.5, "max_stall_s": 1.0},
    )
    assert out.failures == ()
    assert out.artifacts["finding"].startswith("no stall: max ITL")
    metrics = {m.name: m.samples[0] for m in out.metrics}
    assert metrics["stall.long_ttft_s"] >= 1.5  # the long prompt did take its prefill


def test_tokens_lost_are_no_more_than_the_streams_had_left() -> None:
    # one token every 10 ms until 1.05 s: 5 tokens left at the arrival (1.0 s), all made after
    # a 2 s prefill: none lost beyond the 5 it had left, and those 5 came late
    stream = steady(0.0, 1.05, 0.01)
    late = StreamTokens((*[t for t in stream.times_s if t <= 1.0], 3.0), (*[1] * 101, 5))
    found = stall([late], 1.0, 3.0, factor=5, min_stall_s=0.05)
    assert found.running == 1 and found.tokens_lost == 0  # its 5 tokens came within the window
    found = stall([late], 1.0, 2.5, factor=5, min_stall_s=0.05)
    assert found.tokens_lost == 5  # the window ended before them
