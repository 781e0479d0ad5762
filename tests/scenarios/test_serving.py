"""The serving scenario: arrival schedules, closed and open loops within their bounds, the
figures of a point against planted requests, and whole runs against a served model."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
from typing import Any

import httpx
import numpy as np
import pytest
from pydantic import ValidationError

from harness.backends.base import LoadInfo, ServerMemory
from harness.backends.openai_client import Chunk, Endpoint, StreamReply
from harness.scenarios import SCENARIOS
from harness.scenarios import serving as serving_module
from harness.scenarios.base import ScenarioContext
from harness.scenarios.load_loop import Sent, closed_loop, open_loop
from harness.scenarios.load_schedule import LoopKind, arrival_offsets, closed, open_rate
from harness.scenarios.load_stats import (
    MIN_FINISHED,
    RequestSample,
    Slo,
    SloVerdict,
    needed_n,
    percentiles,
    point_stats,
)
from harness.scenarios.serving import ServingParams
from harness.scenarios.serving_artifacts import reply_error, request_sample
from harness.scenarios.serving_metrics import declared_specs, point_metrics
from harness.types import Unit

# -- schedules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rate", "burstiness", "cv"),
    [(0.5, 1.0, 1.0), (4.0, 1.0, 1.0), (100.0, 1.0, 1.0), (4.0, 4.0, 0.5), (4.0, 0.25, 2.0)],
)
def test_arrivals_have_the_rate_and_spread_asked_for(
    rate: float, burstiness: float, cv: float
) -> None:
    offsets = arrival_offsets(rate, 20_000, seed=7, burstiness=burstiness)
    gaps = np.diff([0.0, *offsets])
    assert len(offsets) / offsets[-1] == pytest.approx(rate, rel=0.05)
    # gamma of shape k: coefficient of variation 1/sqrt(k) (1: exponential, i.e. Poisson)
    assert gaps.std() / gaps.mean() == pytest.approx(cv, rel=0.08)
    assert all(b >= a for a, b in itertools.pairwise(offsets))


def test_arrivals_follow_the_seed() -> None:
    assert arrival_offsets(2.0, 50, seed=1) == arrival_offsets(2.0, 50, seed=1)
    assert arrival_offsets(2.0, 50, seed=1) != arrival_offsets(2.0, 50, seed=2)
    assert arrival_offsets(2.0, 0, seed=1) == []
    with pytest.raises(ValueError):
        arrival_offsets(0.0, 5, seed=1)


@pytest.mark.parametrize(
    ("point", "key", "label"),
    [
        (closed(1), "c1", "concurrency 1"),
        (closed(16), "c16", "concurrency 16"),
        (open_rate(0.5), "r0_5", "0.5 req/s"),
        (open_rate(2), "r2", "2 req/s"),
        (open_rate(12.25), "r12_25", "12.25 req/s"),
    ],
)
def test_point_keys_and_labels(point: Any, key: str, label: str) -> None:
    assert (point.key, point.label) == (key, label)


# -- loops -------------------------------------------------------------------------------------


class Tracker:
    """A fake request: sleeps a while that depends on its index, counting what is in flight."""

    def __init__(self, seconds: float = 0.003, fail_at: int | None = None) -> None:
        self.seconds = seconds
        self.fail_at = fail_at
        self.in_flight = 0
        self.most = 0
        self.started: list[int] = []

    async def __call__(self, index: int) -> int:
        if index == self.fail_at:
            raise RuntimeError("a bug in send")
        self.started.append(index)
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(self.seconds * (1 + index % 3))
        finally:
            self.in_flight -= 1
        return index


@pytest.mark.parametrize(("concurrency", "requests"), [(1, 6), (2, 9), (5, 23), (8, 3)])
def test_closed_loop_never_exceeds_its_concurrency(concurrency: int, requests: int) -> None:
    send = Tracker()
    run = asyncio.run(closed_loop(send, concurrency, requests, max_seconds=30))
    assert send.most == run.max_in_flight == min(concurrency, requests)
    assert sorted(s.result for s in run.finished) == list(range(requests))
    assert (run.cut, run.hit_deadline, run.sent) == (0, False, requests)
    assert 0 < run.duration_s < 30
    assert all(s.due_s is None for s in run.finished)


def test_open_loop_sends_on_schedule_and_stops_at_the_schedule_end() -> None:
    offsets = [0.01, 0.02, 0.05, 0.06, 0.08]
    send = Tracker(seconds=0.02)
    run = asyncio.run(open_loop(send, offsets, max_seconds=30))
    assert sorted(send.started) == [0, 1, 2, 3, 4] and run.sent == 5 and run.cut == 0
    for sent in run.finished:
        assert sent.due_s == offsets[sent.index]
        assert sent.start_s >= sent.due_s  # never early; how late is the machine's business
    assert send.most >= 2  # requests overlap: an open loop does not wait for the last one


@pytest.mark.parametrize("kind", [LoopKind.CLOSED, LoopKind.OPEN])
def test_a_point_stops_at_max_seconds_and_counts_the_cut(kind: LoopKind) -> None:
    send = Tracker(seconds=20.0)  # a server that never answers in time
    began = time.perf_counter()
    if kind is LoopKind.CLOSED:
        run = asyncio.run(closed_loop(send, 3, 100, max_seconds=0.2))
    else:
        run = asyncio.run(open_loop(send, [0.0, 0.01, 0.02, 5.0], max_seconds=0.2))
    assert time.perf_counter() - began < 10  # bounded: far below the 20 s a request takes
    assert run.finished == () and run.cut == 3 and run.hit_deadline
    assert run.duration_s == 0.2 and send.in_flight == 0  # the cut were cancelled
    assert sorted(send.started) == [0, 1, 2]  # the arrival due at 5 s was never sent


def test_a_point_stops_at_its_request_bound() -> None:
    send = Tracker(seconds=0.001)
    run = asyncio.run(closed_loop(send, 4, 10, max_seconds=30))
    assert len(send.started) == 10 and run.sent == 10


@pytest.mark.parametrize("loop", ["closed", "open"])
def test_a_send_that_raises_is_a_bug_not_a_result(loop: str) -> None:
    send = Tracker(fail_at=1)
    with pytest.raises(RuntimeError, match="a bug in send"):
        if loop == "closed":
            asyncio.run(closed_loop(send, 2, 4, max_seconds=30))
        else:
            asyncio.run(open_loop(send, [0.0, 0.001, 0.002], max_seconds=30))


# -- statistics --------------------------------------------------------------------------------


@pytest.mark.parametrize(("quantile", "needed"), [(50, 2), (90, 10), (99, 100)])
def test_percentiles_need_enough_values(quantile: int, needed: int) -> None:
    assert needed_n(quantile) == needed
    assert percentiles([1.0] * (needed - 1)).at(quantile) is None
    assert percentiles([1.0] * needed).at(quantile) == 1.0


def test_percentiles_interpolate_linearly_and_skip_non_finite() -> None:
    spread = percentiles([float(v) for v in range(100, 0, -1)] + [math.nan, math.inf])
    assert spread.n == 100
    assert (spread.at(50), spread.at(90), spread.at(99)) == pytest.approx((50.5, 90.1, 99.01))
    assert percentiles([]).n == 0 and percentiles([]).at(50) is None


def sample(
    i: int, ttft: float, e2e: float, tokens: int = 11, error: str | None = None
) -> RequestSample:
    return RequestSample(i, 0.1 * i, error, ttft, e2e, tokens, (0.01,) * max(tokens - 1, 0))


def test_tpot_is_the_decode_time_per_token_after_the_first() -> None:
    assert sample(0, 0.1, 1.1, tokens=11).tpot_s == pytest.approx(0.1)
    assert sample(0, 0.1, 1.1, tokens=1).tpot_s is None


# 20 planted requests: TTFT 0.05 s ... 1.0 s, e2e = TTFT + 1 s, 11 tokens; 2 failed
PLANTED = [sample(i, 0.05 * (i + 1), 0.05 * (i + 1) + 1.0) for i in range(20)] + [
    sample(20, 0.0, 0.5, 0, error="HTTP 500: boom"),
    sample(21, 0.0, 0.5, 0, error="HTTP 500: boom"),
]


@pytest.mark.parametrize(
    ("slo", "good", "verdict"),
    [
        (Slo(ttft_s=0.5), 10, SloVerdict.MISSED),  # 10 of 22 within
        (Slo(ttft_s=1.0), 20, SloVerdict.MET),  # 20 of 22 >= 90%
        (Slo(ttft_s=1.0, e2e_s=1.5), 10, SloVerdict.MISSED),
        (Slo(tpot_s=0.1), 20, SloVerdict.MET),  # every completed one decodes at 0.1 s/token
        (Slo(tpot_s=0.099), 0, SloVerdict.MISSED),
        (Slo(), None, SloVerdict.NO_SLO),
    ],
)
def test_goodput_counts_completed_requests_within_every_slo(
    slo: Slo, good: int | None, verdict: SloVerdict
) -> None:
    stats = point_stats(PLANTED, cut=1, duration_s=4.0, slo=slo)
    assert (stats.sent, stats.completed, stats.errors, stats.cut) == (23, 20, 2, 1)
    assert stats.request_rps == pytest.approx(20 / 4.0)
    assert stats.output_tps == pytest.approx(20 * 11 / 4.0)
    assert stats.good == good and stats.slo_verdict is verdict
    if good is None:
        assert stats.goodput_rps is None and stats.slo_share is None
    else:
        assert stats.goodput_rps == pytest.approx(good / 4.0)
        assert stats.slo_share == pytest.approx(good / 22)  # of finished requests
    assert stats.ttft.at(50) == pytest.approx(0.525) and stats.ttft.n == 20
    assert stats.itl.n == 200 and stats.itl.at(99) == pytest.approx(0.01)
    assert stats.error_kinds == (("HTTP 500: boom", 2),)


def test_too_few_requests_leave_goodput_and_the_verdict_inconclusive() -> None:
    few = PLANTED[: MIN_FINISHED - 1]
    stats = point_stats(few, cut=0, duration_s=1.0, slo=Slo(ttft_s=10.0))
    assert stats.slo_verdict is SloVerdict.INCONCLUSIVE and not stats.conclusive
    assert stats.goodput_rps is None and stats.slo_share is None
    assert stats.good == len(few) and stats.ttft.at(90) is None and stats.ttft.at(50) is not None


def test_point_metrics_are_named_for_the_point_with_units() -> None:
    stats = point_stats(PLANTED, cut=0, duration_s=4.0, slo=Slo(ttft_s=1.0))
    metrics = {m.name: m for m in point_metrics(closed(4), stats)}
    assert metrics["serving.c4.request_rps"].unit is Unit.REQUESTS_PER_SECOND
    assert metrics["serving.c4.output_tps"].unit is Unit.TOKENS_PER_SECOND
    assert metrics["serving.c4.ttft_p90_s"].unit is Unit.SECONDS
    assert metrics["serving.c4.goodput_rps"].samples == (5.0,)
    assert metrics["serving.c4.errors"].samples == (2.0,)
    assert "serving.c4.ttft_p99_s" not in metrics  # 20 values cannot give a p99
    assert "serving.c4.itl_p99_s" in metrics  # 200 gaps can
    declared = {s.name: s for s in declared_specs()}
    for name, m in metrics.items():
        assert declared[name].unit is m.unit  # gates and compare know each one
    assert not declared["serving.r0_5.ttft_p90_s"].higher_is_better
    assert declared["serving.r0_5.goodput_rps"].higher_is_better


# -- replies -----------------------------------------------------------------------------------


def chunk(t: float, text: str, finish: str | None = None) -> Chunk:
    data = {"choices": [{"index": 0, "text": text, "finish_reason": finish}]}
    return Chunk(t, data, json.dumps(data))


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (StreamReply(200, (chunk(0.1, "hi"),), 0.2, True), None),
        (
            StreamReply(None, (), 0.1, False, "ConnectError: refused\nmore"),
            "ConnectError: refused more",
        ),
        (
            StreamReply(503, (), 0.1, False, None, '{"error":\n "busy"}'),
            'HTTP 503: {"error": "busy"}',
        ),
        (StreamReply(200, (chunk(0.1, "hi"),), 0.2, False), "the stream ended without [DONE]"),
        (StreamReply(200, (chunk(0.1, ""),), 0.2, True), "no generated text in the stream"),
    ],
)
def test_reply_errors_are_one_line(reply: StreamReply, reason: str | None) -> None:
    assert reply_error(reply) == reason


def words(text: str) -> int:
    return len(text.split())


def test_a_request_counts_tokens_per_chunk_not_chunks() -> None:
    # 3 chunks carrying 1, 3 and 2 words ("tokens" of a whitespace tokenizer)
    chunks = (chunk(0.5, "a"), chunk(0.8, " b c d"), chunk(1.0, " e f", "length"))
    reply = StreamReply(200, chunks, 1.1, True)
    got = request_sample(Sent(3, 0.25, None, reply), words)
    assert (got.index, got.start_s, got.ttft_s, got.e2e_s) == (3, 0.25, 0.5, 1.1)
    assert got.output_tokens == 6 and got.ok
    assert got.itl_s == pytest.approx((0.1, 0.1, 0.1, 0.1, 0.1))
    assert request_sample(Sent(3, 0.25, None, reply), None).output_tokens == 3


# -- params ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"concurrency": [2, 4, 2]}, "concurrency 2 is listed twice"),
        ({"concurrency": [0]}, "concurrency 0 is out of range"),
        ({"request_rates": [0.0]}, "request rate 0 is out of range"),
        ({"request_rates": [0.5, 0.50]}, "request rate 0.5 is listed twice"),
        ({"concurrency": [], "request_rates": []}, "no load point"),
        ({"slo": {}}, "an slo needs at least one threshold"),
        ({"slo": {"ttft_p90": 1}}, "unknown slo threshold 'ttft_p90'"),
        ({"max_seconds_per_point": 0}, "greater than 0"),
    ],
)
def test_bad_params_are_refused_with_the_reason(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ServingParams.model_validate(params)


def test_points_in_order_closed_then_open() -> None:
    params = ServingParams.model_validate({"concurrency": [1, 4], "request_rates": [0.5]})
    assert [p.key for p in params.points()] == ["c1", "c4", "r0_5"]
    assert params.connections() == params.requests_per_point


# -- whole runs (a served model behind an in-process transport) --------------------------------


class MockServed:
    """A served model whose requests go to ``handler`` through httpx's mock transport."""

    def __init__(self, counter: Any = words) -> None:
        self.endpoint = Endpoint("http://served.test", model="toy")
        self.engine = "url"
        self.token_counter = counter
        self.bodies: list[dict[str, Any]] = []

    def server_memory(self) -> ServerMemory | None:
        return None

    def close(self) -> None:
        pass

    def handler(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        if "boom" in json.dumps(body):
            return httpx.Response(500, json={"error": "boom"})
        events = [
            {"choices": [{"index": 0, "text": "one two", "finish_reason": None}]},
            {"choices": [{"index": 0, "text": " three four five", "finish_reason": "length"}]},
            {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 5}},
        ]
        text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=text)


def run_mocked(
    monkeypatch: pytest.MonkeyPatch, served: MockServed, params: dict[str, Any], warmup: int = 1
) -> Any:
    def client(timeout_s: float, connections: int) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(served.handler))

    monkeypatch.setattr(serving_module, "async_client", client)
    info = LoadInfo(0.0, 0, "http:url")
    ctx = ScenarioContext(served, info, 1, warmup, lambda: (served, info), backend="http")
    scenario = SCENARIOS.get("serving")
    return scenario.run(ctx, scenario.params_model.model_validate(params))


def test_a_run_has_one_record_per_point_and_counts_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    served = MockServed()
    params = {
        "concurrency": [1, 3],
        "request_rates": [200.0],
        "requests_per_point": 12,
        "slo": {"ttft_p90_s": 60},
        "prompt_tokens": 40,
        "max_tokens": 5,
    }
    out = run_mocked(monkeypatch, served, params)
    assert out.failures == () and out.skip_reason is None
    points = out.artifacts["points"]
    assert [p["key"] for p in points] == ["c1", "c3", "r200"]
    for p in points:
        assert (p["sent"], p["completed"], p["errors"], p["cut"]) == (12, 12, 0, 0)
        assert p["output_tokens"] == 12 * 5 and p["usage_agrees"]
        assert p["requests"]["output_tokens"] == [5] * 12 and p["slo_verdict"] == "met"
    names = {m.name for m in out.metrics}
    assert {"serving.c3.ttft_p90_s", "serving.r200.goodput_rps", "serving.c1.itl_p50_s"} <= names
    assert out.artifacts["counted_by"] == "tokenizer"
    assert 30 <= out.artifacts["prompt_tokens_counted"] <= 40
    assert len(served.bodies) == 1 + 3 * 12  # the warm-up, then every point's requests
    prompts = [b["prompt"] for b in served.bodies]
    assert len(set(prompts)) == len(prompts)  # no two alike: no prefix cache answers one
    assert all(b["temperature"] == 0.0 and b["stream"] for b in served.bodies)


def test_a_point_whose_every_request_fails_fails_the_case(monkeypatch: pytest.MonkeyPatch) -> None:
    served = MockServed()
    # every prompt says boom: each request gets a 500 (no warm-up, which would stop the run)
    monkeypatch.setattr(serving_module, "numbered", lambda marker, i, text: f"boom {i} {text}")
    out = run_mocked(monkeypatch, served, {"concurrency": [2], "requests_per_point": 4}, warmup=0)
    assert out.failures == (
        'concurrency 2: all 4 finished requests failed (HTTP 500: {"error":"boom"})',
    )
    assert out.artifacts["points"][0]["error_kinds"] == [['HTTP 500: {"error":"boom"}', 4]]


def test_a_failed_warm_up_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    served = MockServed()
    monkeypatch.setattr(serving_module, "numbered", lambda marker, i, text: f"boom {text}")
    out = run_mocked(monkeypatch, served, {"concurrency": [1]})
    assert out.failures == ('the warm-up request failed: HTTP 500: {"error":"boom"}',)
    assert len(served.bodies) == 1  # no point ran


def test_a_model_that_is_not_served_is_a_skip() -> None:
    info = LoadInfo(0.0, 0, "cpu")
    ctx = ScenarioContext(object(), info, 1, 0, lambda: (object(), info), backend="fake")
    scenario = SCENARIOS.get("serving")
    out = scenario.run(ctx, scenario.params_model())
    assert out.skip_reason == "capability_missing: backend fake has no HTTP server"
