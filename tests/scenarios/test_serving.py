"""The serving scenario: its params, each request's reading (errors as one line, tokens per
chunk), and whole runs: against an in-process mock transport, against the planted
OpenAI-compatible server process (several tokens a chunk), and a ``url:`` suite through the
CLI."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from harness.backends.base import LoadInfo, ServerMemory
from harness.backends.http import ServedModel, local_tokenizer
from harness.backends.openai_client import Chunk, Endpoint, StreamReply
from harness.cli import main
from harness.core.types import Status
from harness.core.value_errors import SUITE_VALUE
from harness.results.store import load_run
from harness.scenarios import SCENARIOS
from harness.scenarios import serving as serving_module
from harness.scenarios.base import ScenarioContext
from harness.scenarios.serving import ServingParams
from harness.scenarios.streams.artifacts import reply_error, request_sample
from harness.scenarios.streams.loop import Sent
from tests.servers.planted_process import planted_server

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
            "HTTP 503: 'busy'",  # the server's own message
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
    assert got.output_tokens == 6 and got.text_chunks == 3 and got.ok
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


def test_bad_params_speak_the_suite_checks_language() -> None:
    with pytest.raises(ValidationError) as caught:
        ServingParams.model_validate({"concurrency": [0]})
    (error,) = caught.value.errors()
    assert error["type"] == SUITE_VALUE and error["ctx"]["hint"] == "use 1 to 1024"


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
        "endpoint": "completions",
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
        "concurrency 2: all 4 finished requests failed (HTTP 500 at POST "
        "/v1/chat/completions: 'boom')",
    )
    assert out.artifacts["points"][0]["error_kinds"] == [
        ["HTTP 500 at POST /v1/chat/completions: 'boom'", 4]
    ]


def test_a_failed_warm_up_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    served = MockServed()
    monkeypatch.setattr(serving_module, "numbered", lambda marker, i, text: f"boom {text}")
    out = run_mocked(monkeypatch, served, {"concurrency": [1]})
    assert out.failures == (
        "the warm-up request failed: HTTP 500 at POST /v1/chat/completions: 'boom'",
    )
    assert len(served.bodies) == 1  # no point ran


def test_a_model_that_is_not_served_is_a_skip() -> None:
    info = LoadInfo(0.0, 0, "cpu")
    ctx = ScenarioContext(object(), info, 1, 0, lambda: (object(), info), backend="fake")
    scenario = SCENARIOS.get("serving")
    out = scenario.run(ctx, scenario.params_model())
    assert out.skip_reason == "capability_missing: backend fake has no HTTP server"


# -- against the planted server (a real OpenAI-compatible process, several tokens a chunk) -----


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("planted-toy")
    with planted_server(model_dir=folder) as url:
        yield url, folder


def served_context(url: str, folder: Path | None, warmup: int = 1) -> ScenarioContext:
    model = ServedModel(Endpoint(url), "url", local_tokenizer(folder))
    info = LoadInfo(0.0, 0, "http:url")
    return ScenarioContext(model, info, 1, warmup, lambda: (model, info), backend="http")


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
def test_points_against_the_planted_server_count_every_token(
    planted: tuple[str, Path], endpoint: str
) -> None:
    url, folder = planted
    params = ServingParams.model_validate(
        {
            "concurrency": [1, 4],
            "request_rates": [40.0],
            "requests_per_point": 12,
            "max_tokens": 16,
            "prompt_tokens": 48,
            "endpoint": endpoint,
            "slo": {"e2e_p90_s": 60},
        }
    )
    out = SCENARIOS.get("serving").run(served_context(url, folder), params)
    assert out.failures == () and out.artifacts["counted_by"] == "tokenizer"
    points = out.artifacts["points"]
    assert [p["key"] for p in points] == ["c1", "c4", "r40"]
    for p in points:
        assert (p["sent"], p["completed"], p["errors"], p["cut"]) == (12, 12, 0, 0), p
        done = p["requests"]
        # the server's own count (usage) is the tokenizer's count of what it streamed ...
        assert done["output_tokens"] == done["usage_tokens"] and p["usage_agrees"]
        # ... although its chunks carry one or two tokens each
        assert sum(done["output_tokens"]) > sum(done["text_chunks"])
        assert p["output_tokens"] == sum(done["output_tokens"])
        assert p["itl_s"]["n"] == sum(t - 1 for t in done["output_tokens"])
    assert points[0]["max_in_flight"] == 1 and points[1]["max_in_flight"] <= 4
    metrics = {m.name: m for m in out.metrics}
    for key in ("c1", "c4", "r40"):
        assert metrics[f"serving.{key}.completed"].samples == (12.0,)
        assert f"serving.{key}.ttft_p90_s" in metrics and f"serving.{key}.goodput_rps" in metrics


def test_a_slow_server_is_cut_at_max_seconds(tmp_path: Path) -> None:
    params = ServingParams.model_validate(
        {"concurrency": [2], "requests_per_point": 50, "max_seconds_per_point": 0.5}
    )
    with planted_server(token_delay_ms=1000, model_dir=tmp_path) as url:
        began = time.perf_counter()
        out = SCENARIOS.get("serving").run(served_context(url, tmp_path, warmup=0), params)
        took = time.perf_counter() - began
    (point,) = out.artifacts["points"]
    assert (point["sent"], point["completed"], point["cut"]) == (2, 0, 2)
    assert point["hit_deadline"] and point["duration_s"] == 0.5
    assert took < 30  # a request would take 64 s: the point did not wait for them
    assert out.failures == ()  # nothing failed: the cut are not judged


def test_a_url_suite_runs_through_the_cli(
    planted: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = planted  # url: alone, no local files: tokens are counted one a chunk, and said so
    suite = tmp_path / "load.suite.yaml"
    suite.write_text(
        "schema_version: 1\ndefaults: {warmup: 1, timeout_s: 120}\nmodels:\n"
        f"  - {{name: toy, url: '{url}'}}\n"
        "scenarios:\n  - scenario: serving\n"
        "    params: {concurrency: [1, 2], request_rates: [20], requests_per_point: 10,"
        " max_tokens: 8, prompt_tokens: 32}\n"
    )
    reports = tmp_path / "reports"
    assert main(["run", str(suite), "--report-dir", str(reports), "--run-id", "r"]) == 0
    assert "passed  load::toy::serving" in capsys.readouterr().out
    (result,) = load_run(reports / "r").results
    assert result.status is Status.PASSED and result.artifacts["counted_by"] == "chunks"
    points = result.artifacts["points"]
    assert [(p["key"], p["sent"], p["completed"]) for p in points] == [
        ("c1", 10, 10),
        ("c2", 10, 10),
        ("r20", 10, 10),
    ]
    for p in points:  # one a chunk undercounts what the server says it generated
        assert p["requests"]["output_tokens"] == p["requests"]["text_chunks"]
        assert sum(p["requests"]["usage_tokens"]) > p["output_tokens"] and not p["usage_agrees"]
    names = {m.name for m in result.metrics}
    assert {"serving.c2.request_rps", "serving.r20.output_tps"} <= names
    load = (reports / "r" / "report.md").read_text().split("## Serving", 1)[1]
    assert "tokens counted one a chunk (no local tokenizer)" in load
