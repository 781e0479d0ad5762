"""``cancellation`` against the planted server (a real OpenAI-compatible process): a clean
server stops at once and answers the same after a cancel, by its counters (``/metrics``) and
by probes; a server that keeps generating after a hang-up fails ``stops``; one whose abandoned
stream leaks into the next answer fails ``next_answer``; by its counters, by its CPU time, by
probes. And the verdicts and watches alone,
on made-up readings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.backends.base import LoadInfo
from harness.backends.http import ServedModel, local_tokenizer
from harness.backends.openai_client import Endpoint
from harness.backends.server_counters import Activity
from harness.backends.server_memory import find_listener
from harness.core.check_types import CheckStatus
from harness.scenarios import SCENARIOS
from harness.scenarios.base import ScenarioContext
from harness.scenarios.cancellation import (
    CancellationParams,
    next_answer_verdict,
    stops_verdict,
)
from harness.scenarios.cancellation.watch import (
    CpuRates,
    idle_bound_s,
    watch_counters,
    watch_cpu,
    watch_probes,
)
from tests.quick_subset import quick_subset
from tests.servers.planted_process import planted_server
from tests.servers.planted_requests import Plant

# 600 tokens at 5 ms each: a server that keeps on runs 3 s or more past the hang-up, three
# times the bound; a clean one stops at its next write (milliseconds)
PARAMS = {"long_max_tokens": 600, "cancels": 2, "max_stop_s": 1.0, "prompt_tokens": 32}
TOKEN_DELAY_MS = 5.0


def served_context(url: str, folder: Path, *, local: bool = False) -> ScenarioContext:
    """The served model; ``local``: its process found on its port (its CPU time readable)."""
    listener = find_listener(url) if local else None
    model = ServedModel(Endpoint(url), "url", local_tokenizer(folder), listener=listener)
    info = LoadInfo(0.0, 0, "http:url")
    return ScenarioContext(model, info, 1, 1, lambda: (model, info), backend="http")


METRICS, CPU, PROBES = "counters /metrics", "server CPU time", "probes"


def _run(plant: Plant | None, route: str, folder: Path) -> Any:
    """``route``: the server serves /metrics; or its tokens burn CPU and its process is known;
    or neither (a threaded server whose abandoned answers do not slow the probes)."""
    with planted_server(
        plant,
        token_delay_ms=TOKEN_DELAY_MS,
        model_dir=folder,
        metrics=route == METRICS,
        spin=route == CPU,
    ) as url:
        params = CancellationParams.model_validate(PARAMS)
        ctx = served_context(url, folder, local=route == CPU)
        return SCENARIOS.get("cancellation").run(ctx, params)


PASS, FAIL = CheckStatus.PASS, CheckStatus.FAIL
CASES = [
    # (plant, how the stop is seen, stops, next_answer)
    (None, METRICS, PASS, PASS),
    (None, CPU, PASS, PASS),
    (None, PROBES, PASS, PASS),
    (Plant.CANCEL_KEEPS_GENERATING, METRICS, FAIL, PASS),
    (Plant.CANCEL_KEEPS_GENERATING, CPU, FAIL, PASS),
    (Plant.DISCONNECT_CORRUPTS, METRICS, PASS, FAIL),
    (Plant.DISCONNECT_CORRUPTS, CPU, PASS, FAIL),
    (Plant.DISCONNECT_CORRUPTS, PROBES, PASS, FAIL),
]


@pytest.mark.parametrize(
    ("plant", "route", "stops", "next_answer"),
    # each plant and each route once in `make test`; every pair nightly
    quick_subset(
        CASES,
        [f"{c[0].value if c[0] else 'clean'}-{c[1].split()[-1]}" for c in CASES],
        {"clean-time", "cancel_keeps_generating-/metrics", "disconnect_corrupts-probes"},
    ),
)
def test_planted_servers_are_caught_by_their_check(
    tmp_path: Path,
    plant: Plant | None,
    route: str,
    stops: CheckStatus,
    next_answer: CheckStatus,
) -> None:
    out = _run(plant, route, tmp_path)
    metrics = route == METRICS
    verdicts = {c.name: c for c in out.checks}
    assert verdicts["stops"].status is stops, verdicts["stops"].reason
    assert verdicts["next_answer"].status is next_answer, verdicts["next_answer"].reason
    assert out.artifacts["route"] == route
    assert len(out.failures) == [stops, next_answer].count(CheckStatus.FAIL)
    assert all("\n" not in f for f in out.failures)
    names = {m.name for m in out.metrics}
    assert "cancellation.stop_s" in names and "cancellation.changed_answers" in names
    assert ("cancellation.decoded_after_cancel" in names) is metrics
    if stops is CheckStatus.FAIL:
        (reason,) = [f for f in out.failures if f.startswith("stops:")]
        assert "kept generating" in reason and route in reason
        assert ("decode steps after the hang-up" in reason) is metrics
    if next_answer is CheckStatus.FAIL:
        (reason,) = [f for f in out.failures if f.startswith("next_answer:")]
        assert "warm control differ at character" in reason


def _trial(**changes: Any) -> dict[str, Any]:
    trial = {
        "cut_done": False,
        "cut_error": None,
        "remaining_s": 5.0,
        "stop_s": 0.05,
        "how": "probes",
        "decoded_after": None,
        "watched_s": 0.05,
        "answers_after": 1,
        "after_error": None,
        "after_same": True,
        "after_differs": None,
    }
    return {**trial, **changes}


@pytest.mark.parametrize(
    ("trials", "status", "words"),
    [
        ([_trial()], CheckStatus.PASS, "stopped within 0.05 s"),
        ([_trial(), _trial(stop_s=2.5)], CheckStatus.FAIL, "1 of 2 cancels"),
        ([_trial(stop_s=None, watched_s=9.0)], CheckStatus.FAIL, "had not stopped 9.0 s"),
        ([_trial(remaining_s=0.5)], CheckStatus.UNJUDGED, "raise long_max_tokens"),
        ([_trial(cut_done=True)], CheckStatus.UNJUDGED, "ended before the client hung up"),
        ([_trial(cut_error="HTTP 500")], CheckStatus.FAIL, "failed before the hang-up"),
    ],
)
def test_stops_verdict(trials: list[dict[str, Any]], status: CheckStatus, words: str) -> None:
    verdict = stops_verdict(trials, 1.0)
    assert verdict.status is status and words in verdict.reason


@pytest.mark.parametrize(
    ("trials", "drift", "status", "words"),
    [
        ([_trial(), _trial()], "", CheckStatus.PASS, "every answer after them (2)"),
        (
            [_trial(after_same=False, after_differs="differ at character 3 (lengths 9 and 9)")],
            " (drift)",
            CheckStatus.FAIL,
            "differ at character 3 (lengths 9 and 9) (drift)",
        ),
        ([_trial(after_error="HTTP 404", after_same=False)], "", CheckStatus.FAIL, "HTTP 404"),
    ],
)
def test_next_answer_verdict(
    trials: list[dict[str, Any]], drift: str, status: CheckStatus, words: str
) -> None:
    verdict = next_answer_verdict(trials, drift)
    assert verdict.status is status and words in verdict.reason


def _readings(values: list[Activity | None]) -> Iterator[Activity | None]:
    yield from values
    while True:
        yield values[-1]


def test_counters_watch_stops_at_the_first_idle_reading_and_counts_decodes() -> None:
    feed = _readings(
        [None, Activity(1, 100, "/metrics"), Activity(1, 140, "/metrics"), Activity(0, 150, "/m")]
    )
    stop = watch_counters(lambda: next(feed), 0.0, 1e9, 0.0)
    assert stop.stop_s is not None and stop.decoded_after == 50 and stop.how == "counters /m"


def test_counters_watch_gives_up_at_its_limit() -> None:
    feed = _readings([Activity(1, 5, "/slots")])
    stop = watch_counters(lambda: next(feed), 0.0, 0.0, 0.0)
    assert stop.stop_s is None and stop.how == "counters /slots"


def test_probe_watch_ends_at_the_first_probe_at_idle_speed() -> None:
    times = iter([3.0, 2.0, 0.1, 0.1])
    stop, probes = watch_probes(lambda: next(times), 0.0, idle_bound_s([0.1, 0.12]), 1e12)
    assert stop.probes == 3 and [p.e2e_s for p in probes] == [3.0, 2.0, 0.1]
    assert stop.stop_s == probes[-1].sent_s


def test_a_failed_probe_is_not_an_idle_one() -> None:
    answers = iter([None, 0.1])
    stop, probes = watch_probes(lambda: next(answers), 0.0, 1.0, 1e12)
    assert [p.e2e_s for p in probes] == [None, 0.1] and stop.stop_s is not None


def test_cpu_watch_stops_at_the_first_quiet_window() -> None:
    used = iter([0.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0])  # busy, quiet, busy, then quiet for good
    rates = CpuRates(idle=0.0, busy=1.0)
    stop = watch_cpu(lambda: next(used), 0.0, rates, 1e12, 0.001)
    assert stop.stop_s is not None and stop.how == "server CPU time"
    assert watch_cpu(lambda: None, 0.0, rates, 1e12, 0.001).stop_s is None


@pytest.mark.parametrize(
    ("idle", "busy", "usable"), [(0.0, 0.6, True), (0.0, 0.05, False), (0.2, 0.5, False)]
)
def test_cpu_is_used_only_where_generating_shows(idle: float, busy: float, usable: bool) -> None:
    assert CpuRates(idle, busy).usable is usable


def test_a_model_that_is_not_served_is_a_skip() -> None:
    info = LoadInfo(0.0, 0, "x")
    ctx = ScenarioContext(object(), info, 1, 0, lambda: (object(), info), backend="mlx_lm")
    out = SCENARIOS.get("cancellation").run(ctx, CancellationParams())
    assert out.skip_reason
