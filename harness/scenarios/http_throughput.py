"""``http_throughput``: one request at a time to a served model, timed as a client sees it.

Per run: one streamed request of about ``prompt_tokens`` tokens of ordinary text asking for
``gen_tokens`` tokens at temperature 0; each request starts with its own marker, so none reuses
the server's prompt cache (that is the ``api_contracts`` and prompt-cache business). Tokens
are counted in each chunk with the model's own tokenizer (the count of all text so far less
the count before the chunk), never as one token a chunk, so a server that sends several
tokens in a chunk is timed right:
- TTFT = request sent to the first chunk carrying generated text;
- decode tokens/s = tokens after the first chunk / (last chunk - first chunk);
- inter-token latency: a chunk of k tokens after a gap g counts k gaps of g/k (p50/p90/p99);
- prefill tokens/s = the prompt tokens the server reports (usage) / TTFT;
- end-to-end = request sent to the last event.

Without a local tokenizer (a ``url:`` model alone) tokens are counted one a chunk, and the
record says so (``counted_by``). The server's own count (``usage.completion_tokens``) is kept
beside ours; a difference is a finding in the artifacts, not a failure. The server process's
resident memory (peak on Linux) is measured after the runs when the harness started it.
"""

from __future__ import annotations

import secrets
from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.backends.base import BackendCapability, Served
from harness.backends.openai_client import (
    ENDPOINT_PATHS,
    StreamReply,
    generation_body,
    stream,
    sync_client,
    token_arrivals,
)
from harness.metrics import MetricSpec
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
    metric,
)
from harness.scenarios.prompts import numbered, text_of_about
from harness.scenarios.throughput import percentile
from harness.types import Metric, Unit

PREFIX = "http_throughput"
TTFT = MetricSpec(f"{PREFIX}.ttft_s", Unit.SECONDS, False, "time to first token", noise_floor=0.05)
PREFILL = MetricSpec(
    f"{PREFIX}.prefill_tps", Unit.TOKENS_PER_SECOND, True, "prompt tokens (usage) / TTFT"
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
    f"{PREFIX}.server_peak_bytes", Unit.BYTES, False, "server process peak resident memory"
)


class HttpThroughputParams(Params):
    prompt_tokens: int = Field(128, ge=1, description="prompt length in tokens (about)")
    gen_tokens: int = Field(32, ge=2, description="tokens to ask for (max_tokens)")
    endpoint: Literal["completions", "chat"] = Field(
        "completions", description="completions: the raw text; chat: one user turn, templated"
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
        bodies = [  # a distinct first token each: no request reuses the server's prompt cache
            request_body(params, numbered(nonce, i, text)) for i in range(ctx.warmup + ctx.repeats)
        ]
        with sync_client(600.0) as client:
            sent = [stream(client, model.endpoint, path, body) for body in bodies]
        warm, replies = sent[: ctx.warmup], sent[ctx.warmup :]
        bad = [r for r in (*warm, *replies) if not r.ok or not r.content_chunks]
        if bad:
            first = bad[0]
            why = first.error or (
                f"HTTP {first.status}: {first.raw}" if not first.ok else "no generated text"
            )
            return ScenarioOutput((), failures=(f"{len(bad)} request(s) failed: {why}",))
        return self._measure(model, replies, text)

    @staticmethod
    def _measure(model: Served, replies: list[StreamReply], text: str) -> ScenarioOutput:
        samples: dict[MetricSpec, list[float]] = {spec: [] for spec in HttpThroughput.metrics}
        usage_tokens: list[int | None] = []
        counted_by = "tokenizer"
        for reply in replies:
            arrivals = token_arrivals(reply.chunks, model.token_counter)
            counted_by = arrivals.counted_by
            ttft = arrivals.ttft_s or float("nan")
            gaps = arrivals.inter_token_s()
            prompt = reply.usage.get("prompt_tokens")
            completion = reply.usage.get("completion_tokens")
            usage_tokens.append(completion if isinstance(completion, int) else None)
            samples[TTFT].append(ttft)
            if isinstance(prompt, int) and ttft > 0:
                samples[PREFILL].append(prompt / ttft)
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
        memory = model.server_memory()
        if memory is not None:
            samples[SERVER_RSS].append(float(memory.peak_bytes or memory.rss_bytes))
        metrics: tuple[Metric, ...] = tuple(
            metric(spec, values) for spec, values in samples.items() if values
        )
        counted = [int(v) for v in samples[TOKENS]]
        artifacts = {
            "engine": model.engine,
            "counted_by": counted_by,
            "prompt_chars": len(text),
            "generated_tokens": counted,
            "usage_completion_tokens": usage_tokens,
            "usage_agrees": all(
                u is None or u == c for u, c in zip(usage_tokens, counted, strict=True)
            ),
            "first_text": replies[0].content[:200],
        }
        return ScenarioOutput(metrics, artifacts)


SCENARIO = HttpThroughput()
