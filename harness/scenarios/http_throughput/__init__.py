"""``http_throughput``: one request at a time to a served model, timed as a client sees it.

Per run: one streamed request of about ``prompt_tokens`` tokens of ordinary text asking for
``gen_tokens`` tokens at temperature 0; each request's text starts with its own marker, so none
reuses another's text from the server's prompt cache (only a chat template's shared opening,
left out of prefill below; reuse is the ``api_contracts`` and prompt-cache business). Tokens
are counted in each chunk with the model's own tokenizer (the count of all text so far less
the count before the chunk), never as one token a chunk, so a server that sends several
tokens in a chunk is timed right:
- TTFT = request sent to the first chunk carrying generated text;
- decode tokens/s = tokens after the first chunk / (last chunk - first chunk);
- inter-token latency: a chunk of k tokens after a gap g counts k gaps of g/k (p50/p90/p99);
- prefill tokens/s = the prompt tokens the server reports (usage) less those it says came from
  its cache (a chat template's shared opening is cached) / TTFT;
- end-to-end = request sent to the last event.

Without a local tokenizer (a ``url:`` model alone) tokens are counted one a chunk, and the
record says so (``counted_by``; ``mlx-harness validate`` warns). The server's own count
(``usage.completion_tokens``) is kept beside ours; a difference is a finding in the artifacts,
not a failure.

Server-side truth, where the server gives it (llama-server's ``timings`` in its last chunk,
:mod:`harness.scenarios.server_timings`): its own prefill and decode tokens/s, and what lies
between the two views as figures of their own: the TTFT overhead (client TTFT less the
server's prompt time: HTTP, queueing, tokenizing, the first SSE chunk) and the decode ratio
(client decode / server decode, same definition: 1.0 means streaming cost nothing). Servers
that send only ``usage`` get their token counts recorded (``server_timing``: ``timings``,
``usage`` or ``none``). The prompt tokens a server took from its cache (``cache_n``, or usage's
``cached_tokens``) are kept per request (``server_cached_tokens``) and left out of prefill:
a chat template's opening is the same in every request, so a server caches it even though
each request's own text starts differently.

The server process's memory (peak where the OS keeps one, else resident) is measured after the
runs: the process the harness started, or the one listening on a ``url:``'s port on this
machine; for a remote server the record says why not (``server_memory``), never giving the
worker's memory for the server's.
"""

from __future__ import annotations

import dataclasses
import math
import secrets
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.backends.base import BackendCapability, MemoryUnavailable, Served, ServerMemory
from harness.backends.openai_client import (
    ENDPOINT_PATHS,
    StreamReply,
    generation_body,
    request_failure,
    stream,
    sync_client,
    token_arrivals,
)
from harness.backends.server_memory import memory_note
from harness.core.metrics import MetricSpec
from harness.core.types import Metric, Unit
from harness.scenarios.artifacts import ScenarioArtifacts
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
    metric,
)
from harness.scenarios.percentiles import percentile
from harness.scenarios.prompts import numbered, text_of_about
from harness.scenarios.server_timings import (
    ServerTimings,
    TimingSource,
    cached_tokens,
    least_told,
    read_timings,
    timing_source,
)

REQUEST_TIMEOUT_S = 600.0  # per request, whole answer (the case's own limit cuts it sooner)
PREFIX = "http_throughput"
TTFT = MetricSpec(f"{PREFIX}.ttft_s", Unit.SECONDS, False, "time to first token", noise_floor=0.05)
PREFILL = MetricSpec(
    f"{PREFIX}.prefill_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "prompt tokens the server evaluated (usage, less those from its cache) / TTFT",
)
DECODE = MetricSpec(f"{PREFIX}.decode_tps", Unit.TOKENS_PER_SECOND, True, "generated tokens/s")
ITL_P50 = MetricSpec(f"{PREFIX}.itl_p50_s", Unit.SECONDS, False, "inter-token latency p50")
ITL_P90 = MetricSpec(
    f"{PREFIX}.itl_p90_s", Unit.SECONDS, False, "inter-token latency p90", noise_floor=0.08
)
ITL_P99 = MetricSpec(
    f"{PREFIX}.itl_p99_s", Unit.SECONDS, False, "inter-token latency p99", noise_floor=0.15
)
E2E = MetricSpec(f"{PREFIX}.e2e_s", Unit.SECONDS, False, "end-to-end time of one request")
TOKENS = MetricSpec(f"{PREFIX}.generated_tokens", Unit.TOKENS, True, "tokens generated per run")
PER_CHUNK = MetricSpec(
    f"{PREFIX}.tokens_per_chunk", Unit.RATIO, False, "generated tokens per text chunk (mean)"
)
SERVER_RSS = MetricSpec(
    f"{PREFIX}.server_peak_bytes",
    Unit.BYTES,
    False,
    "server process peak resident memory (resident after the runs where the OS keeps no peak)",
)
SERVER_PREFILL = MetricSpec(
    f"{PREFIX}.server_prefill_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "prompt tokens/s by the server's own clock (llama-server timings)",
)
SERVER_DECODE = MetricSpec(
    f"{PREFIX}.server_decode_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "generated tokens/s by the server's own clock (llama-server timings)",
)
TTFT_OVERHEAD = MetricSpec(
    f"{PREFIX}.ttft_overhead_s",
    Unit.SECONDS,
    False,
    "client TTFT - the server's prompt time: HTTP, queueing, tokenizing, the first SSE chunk",
    noise_floor=0.10,
)
DECODE_RATIO = MetricSpec(
    f"{PREFIX}.decode_vs_server",
    Unit.RATIO,
    True,
    "client decode tokens/s / the server's own (1 = streaming over HTTP/SSE cost nothing)",
)


class HttpThroughputParams(Params):
    prompt_tokens: int = Field(128, ge=1, description="prompt length in tokens (about)")
    gen_tokens: int = Field(32, ge=2, description="tokens to ask for (max_tokens)")
    endpoint: Literal["chat", "completions"] = Field(
        "chat", description="chat: one user turn, templated; completions: the raw text"
    )
    ignore_eos: bool = Field(
        True, description="ask the server to keep going past EOS (llama-server's ignore_eos)"
    )


def request_body(params: HttpThroughputParams, text: str) -> dict[str, Any]:
    return generation_body(
        params.endpoint, text, max_tokens=params.gen_tokens, ignore_eos=params.ignore_eos
    )


class HttpThroughput(BaseScenario[HttpThroughputParams]):
    name: ClassVar[str] = "http_throughput"
    version: ClassVar[int] = 1
    params_model = HttpThroughputParams
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.HTTP})
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        TTFT,
        PREFILL,
        DECODE,
        ITL_P50,
        ITL_P90,
        ITL_P99,
        E2E,
        TOKENS,
        PER_CHUNK,
        SERVER_RSS,
        SERVER_PREFILL,
        SERVER_DECODE,
        TTFT_OVERHEAD,
        DECODE_RATIO,
    )

    def workload(self, params: HttpThroughputParams) -> Workload:
        return Workload(params.prompt_tokens, params.gen_tokens)

    def run(self, ctx: ScenarioContext, params: HttpThroughputParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Served):
            return lacks(ctx, BackendCapability.HTTP)
        text = text_of_about(max(params.prompt_tokens - 4, 1), model.token_counter)
        path = ENDPOINT_PATHS[params.endpoint]
        nonce = secrets.token_hex(3)
        bodies = [  # a distinct text each: no request reuses another's (a template's opening aside)
            request_body(params, numbered(nonce, i, text)) for i in range(ctx.warmup + ctx.repeats)
        ]
        sent: list[StreamReply] = []
        with sync_client(REQUEST_TIMEOUT_S) as client:
            for body in bodies:  # the first failure ends the case: its cause is the finding
                sent.append(stream(client, model.endpoint, path, body, case_end=ctx.case_end))
                if not sent[-1].ok or not sent[-1].content_chunks:
                    break
        good = [r for r in sent[ctx.warmup :] if r.ok and r.content_chunks]
        if len(good) == ctx.repeats:
            return self._measure(model, good, text)
        bad = sent[-1]
        why = request_failure(bad, params.endpoint)
        if not bad.out_of_case_time:
            return ScenarioOutput((), failures=(f"request {len(sent)} of {len(bodies)}: {why}",))
        kept = self._measure(model, good, text) if good else ScenarioOutput(())
        return dataclasses.replace(
            kept,
            timed_out=f"the case's time limit (timeout_s) ran out after {len(good)} of "
            f"{ctx.repeats} measured requests: {why}",
        )

    @staticmethod
    def _measure(model: Served, replies: list[StreamReply], text: str) -> ScenarioOutput:
        samples: dict[MetricSpec, list[float]] = {spec: [] for spec in HttpThroughput.metrics}
        usage_tokens: list[int | None] = []
        usage_prompt: list[int | None] = []
        server_tokens: list[int | None] = []
        cached: list[int | None] = []  # prompt tokens the server took from its cache
        sources: set[TimingSource] = set()
        counted_by = "tokenizer"
        for reply in replies:
            arrivals = token_arrivals(reply.chunks, model.token_counter)
            counted_by = arrivals.counted_by
            ttft = arrivals.ttft_s or float("nan")
            gaps = arrivals.inter_token_s()
            prompt = reply.usage.get("prompt_tokens")
            completion = reply.usage.get("completion_tokens")
            usage_tokens.append(completion if isinstance(completion, int) else None)
            usage_prompt.append(prompt if isinstance(prompt, int) else None)
            samples[TTFT].append(ttft)
            server = read_timings(reply.timings)
            cached.append(cached_tokens(server, reply.usage))
            if isinstance(prompt, int) and ttft > 0:
                samples[PREFILL].append((prompt - (cached[-1] or 0)) / ttft)
            decode = arrivals.decode_tps()
            if decode is not None:
                samples[DECODE].append(decode)
            if gaps:
                samples[ITL_P50].append(percentile(gaps, 50))
                samples[ITL_P90].append(percentile(gaps, 90))
                samples[ITL_P99].append(percentile(gaps, 99))
            samples[E2E].append(reply.elapsed_s)
            samples[TOKENS].append(float(arrivals.tokens))
            samples[PER_CHUNK].append(arrivals.tokens / max(len(arrivals.chunk_tokens), 1))
            sources.add(timing_source(reply.timings, reply.usage))
            server_tokens.append(server.generated_tokens if server else None)
            if server is not None:
                _server_side(samples, server, ttft, decode)
        memory = model.server_memory()
        if isinstance(memory, ServerMemory):
            samples[SERVER_RSS].append(float(memory.peak_bytes or memory.rss_bytes))
        metrics: tuple[Metric, ...] = tuple(
            _with_view(metric(spec, values), memory) for spec, values in samples.items() if values
        )
        counted = [int(v) for v in samples[TOKENS]]
        artifacts = {
            "engine": model.engine,
            "counted_by": counted_by,
            "prompt_chars": len(text),
            "generated_tokens": counted,
            "usage_completion_tokens": usage_tokens,
            "usage_prompt_tokens": usage_prompt,
            "usage_agrees": all(
                u is None or u == c for u, c in zip(usage_tokens, counted, strict=True)
            ),
            "server_timing": least_told(sources).value,
            "server_generated_tokens": server_tokens,
            "server_cached_tokens": cached,
            "server_memory": memory_note(memory),
            "first_text": replies[0].content[:200],
        }
        return ScenarioOutput(metrics, artifacts)


def _server_side(
    samples: dict[MetricSpec, list[float]],
    server: ServerTimings,
    ttft_s: float,
    decode_tps: float | None,
) -> None:
    """The server's own figures of one request, and the client's against them."""
    if server.prompt_tps is not None:
        samples[SERVER_PREFILL].append(server.prompt_tps)
    if math.isfinite(ttft_s):
        samples[TTFT_OVERHEAD].append(ttft_s - server.prompt_s)
    if server.decode_tps is not None:
        samples[SERVER_DECODE].append(server.decode_tps)
        if decode_tps is not None:
            samples[DECODE_RATIO].append(decode_tps / server.decode_tps)


def _with_view(measured: Metric, memory: ServerMemory | MemoryUnavailable | None) -> Metric:
    if measured.name != SERVER_RSS.name or not isinstance(memory, ServerMemory):
        return measured
    view = "server_peak_rss" if memory.peak_bytes else "server_rss"
    return dataclasses.replace(measured, view=view)


@dataclass(frozen=True)
class ServedArtifacts(ScenarioArtifacts):
    """What ``http_throughput`` (and the other served scenarios, under the same keys) records
    of the server that the engine tables read."""

    engine: str | None = None
    counted_by: str | None = None  # tokenizer, chunks or usage: how generated tokens were counted
    server_memory: str | None = None  # what the server's memory reading was, or why none ("n/a")


SCENARIO = HttpThroughput()
