"""``serving``: a served model under load, as vLLM's bench serve, GuideLLM or AIPerf load it,
with tokens counted per chunk by the model's own tokenizer.

Points: closed loop at each ``concurrency`` (N workers, each sending its next request when its
last one ends) and open loop at each of ``request_rates`` (Poisson arrivals, or gamma with
``burstiness``, drawn from ``seed``). Every point is bounded in requests
(``requests_per_point``) AND in seconds (``max_seconds_per_point``: no request is sent after
it, and those in flight are cut and counted apart). All requests are streamed on one event loop
with httpx's async client, at temperature 0, each with a prompt of about ``prompt_tokens``
tokens of ordinary text that starts with its own marker (so no server answers it from a prefix
cache filled by an earlier request, of this run or another).

Per point (definitions in :mod:`harness.scenarios.streams.stats`): completed and failed requests
(the commonest one-line reasons kept), request throughput, output tokens/s, TTFT, TPOT, ITL and
e2e p50/p90/p99, and with ``slo:`` the goodput and the share of requests within it. Metrics are
named for the point (:mod:`harness.scenarios.streams.metrics`); each request's figures are kept
in the artifacts (bounded) so a report can redraw the curves.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator

from harness.backends.base import BackendCapability, Served, ServerMemory
from harness.backends.openai_client import (
    ENDPOINT_PATHS,
    StreamReply,
    astream,
    async_client,
    generation_body,
)
from harness.core.metrics import MetricSpec
from harness.core.types import Metric
from harness.core.value_errors import value_error
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
)
from harness.scenarios.prompts import numbered, text_of_about
from harness.scenarios.streams.artifacts import point_record, reply_error, request_sample
from harness.scenarios.streams.loop import LoopRun, Send, closed_loop, open_loop
from harness.scenarios.streams.metrics import declared_specs, point_metrics
from harness.scenarios.streams.schedule import (
    MAX_RATE,
    MIN_RATE,
    LoadPoint,
    LoopKind,
    arrival_offsets,
    closed,
    open_rate,
)
from harness.scenarios.streams.slo import PROMPT_PREFIX_TOKENS, REQUEST_TIMEOUT_S, SloParams
from harness.scenarios.streams.stats import PointStats, point_stats

MAX_CONCURRENCY = 1024


class ServingParams(Params):
    concurrency: list[int] = Field(
        default_factory=lambda: [1, 2, 4],
        description="closed-loop points: requests kept in flight",
    )
    request_rates: list[float] = Field(
        default_factory=list,
        validate_default=True,  # checks that some point is given
        description="open-loop points: Poisson arrivals, requests/s",
        json_schema_extra={"unit": "requests/s"},
    )
    requests_per_point: int = Field(32, ge=1, le=100_000, description="requests a point sends")
    max_seconds_per_point: float = Field(
        60.0,
        gt=0,
        le=3600,
        description="a point ends here; requests in flight are cut",
        json_schema_extra={"unit": "s"},
    )
    prompt_tokens: int = Field(128, ge=8, description="prompt length in tokens (about)")
    max_tokens: int = Field(64, ge=1, description="tokens each request asks for")
    endpoint: Literal["chat", "completions"] = Field(
        "chat", description="chat: one user turn, templated; completions: the raw text"
    )
    ignore_eos: bool = Field(
        True, description="ask the server to keep going past EOS (llama-server's ignore_eos)"
    )
    seed: int = Field(0, description="seed of the open-loop arrival times")
    burstiness: float = Field(
        1.0, gt=0, description="gamma shape of inter-arrival times: 1 is Poisson, < 1 burstier"
    )
    slo: SloParams | None = Field(None, description="p90 thresholds for goodput")

    @field_validator("concurrency")
    @classmethod
    def _concurrency(cls, values: list[int]) -> list[int]:
        wrong = [v for v in values if not 1 <= v <= MAX_CONCURRENCY]
        if wrong:
            raise value_error(
                f"concurrency {wrong[0]} is out of range", f"use 1 to {MAX_CONCURRENCY}"
            )
        twice = [v for v in values if values.count(v) > 1]
        if twice:
            raise value_error(f"concurrency {twice[0]} is listed twice", "list each once")
        return values

    @field_validator("request_rates")
    @classmethod
    def _rates(cls, values: list[float], info: ValidationInfo) -> list[float]:
        wrong = [v for v in values if not MIN_RATE <= v <= MAX_RATE]
        if wrong:
            raise value_error(
                f"request rate {wrong[0]:g} is out of range",
                f"use {MIN_RATE:g} to {MAX_RATE:g} requests/s",
            )
        keys = [open_rate(v).key for v in values]
        twice = [v for v, k in zip(values, keys, strict=True) if keys.count(k) > 1]
        if twice:
            raise value_error(f"request rate {twice[0]:g} is listed twice", "list each once")
        if not values and not info.data.get("concurrency", [1]):
            raise value_error(
                "no load point", "give concurrency: [1, 2, 4] or request_rates: [0.5, 1]"
            )
        return values

    def points(self) -> list[LoadPoint]:
        return [closed(n) for n in self.concurrency] + [open_rate(r) for r in self.request_rates]

    def connections(self) -> int:
        """Connections the client may open: an open loop may have all its requests in flight
        (a smaller pool would queue them in the client and count the wait as TTFT)."""
        most = max(self.concurrency, default=1)
        if self.request_rates:
            most = max(most, self.requests_per_point)
        return most


def request_body(params: ServingParams, text: str) -> dict[str, Any]:
    return generation_body(
        params.endpoint, text, max_tokens=params.max_tokens, ignore_eos=params.ignore_eos
    )


class _Sweep:
    """One case's requests: the served model, its params and the prompt text."""

    def __init__(self, model: Served, params: ServingParams, text: str) -> None:
        self.model = model
        self.params = params
        self.text = text
        self.path = ENDPOINT_PATHS[params.endpoint]
        self.serial = itertools.count()  # numbers every prompt of the case apart
        self.marker = secrets.token_hex(3)

    async def run(self, warmup: int) -> tuple[list[StreamReply], list[LoopRun[StreamReply]]]:
        # each request's whole-answer limit: the points cut theirs at max_seconds_per_point
        # themselves, so this bounds the warm-up (a busy shared machine can take minutes)
        timeout = max(self.params.max_seconds_per_point, REQUEST_TIMEOUT_S)
        async with async_client(timeout, self.params.connections()) as client:

            async def send(index: int) -> StreamReply:
                body = request_body(
                    self.params, numbered(self.marker, next(self.serial), self.text)
                )
                return await astream(client, self.model.endpoint, self.path, body)

            warm = [await send(i) for i in range(warmup)]
            if any(reply_error(r) for r in warm):
                return warm, []
            runs = [await self._point(point, send) for point in self.params.points()]
        return warm, runs

    async def _point(self, point: LoadPoint, send: Send[StreamReply]) -> LoopRun[StreamReply]:
        p = self.params
        if point.kind is LoopKind.CLOSED:
            return await closed_loop(
                send, int(point.value), p.requests_per_point, p.max_seconds_per_point
            )
        offsets = arrival_offsets(point.value, p.requests_per_point, p.seed, p.burstiness)
        return await open_loop(send, offsets, p.max_seconds_per_point)


class Serving(BaseScenario[ServingParams]):
    name: ClassVar[str] = "serving"
    version: ClassVar[int] = 1
    params_model = ServingParams
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.HTTP})
    repeats_apply: ClassVar[bool] = False  # a point's samples are its requests
    samples_from: ClassVar[str] = "requests"
    metrics: ClassVar[tuple[MetricSpec, ...]] = declared_specs()

    def workload(self, params: ServingParams) -> Workload:
        return Workload(params.prompt_tokens, params.max_tokens)

    def run(self, ctx: ScenarioContext, params: ServingParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Served):
            return lacks(ctx, BackendCapability.HTTP)
        counter = model.token_counter
        text = text_of_about(max(params.prompt_tokens - PROMPT_PREFIX_TOKENS, 1), counter)
        sweep = _Sweep(model, params, text)
        warm, runs = asyncio.run(sweep.run(ctx.warmup))
        failed = [why for r in warm if (why := reply_error(r))]
        if failed:
            return ScenarioOutput((), failures=(f"the warm-up request failed: {failed[0]}",))
        metrics: list[Metric] = []
        records: list[dict[str, Any]] = []
        failures: list[str] = []
        counted_by = "tokenizer" if counter is not None else "chunks"
        slo = params.slo.thresholds() if params.slo else None
        for point, run in zip(params.points(), runs, strict=True):
            samples = [request_sample(sent, counter) for sent in run.finished]
            stats = point_stats(samples, run.cut, run.duration_s, slo)
            metrics.extend(point_metrics(point, stats))
            records.append(point_record(point, run, stats, samples))
            if stats.completed == 0 and stats.errors:
                failures.append(_all_failed(point, stats))
        prompt = numbered(sweep.marker, 0, text)
        memory = model.server_memory()
        artifacts: dict[str, Any] = {
            "engine": model.engine,
            "endpoint": params.endpoint,
            "counted_by": counted_by,
            "prompt_chars": len(prompt),
            "prompt_tokens_counted": counter(prompt) if counter is not None else None,
            "slo": params.slo.model_dump() if params.slo else None,
            "points": records,
            "server_peak_bytes": (
                (memory.peak_bytes or memory.rss_bytes)
                if isinstance(memory, ServerMemory)
                else None
            ),
        }
        return ScenarioOutput(tuple(metrics), artifacts, failures=tuple(failures))


def _all_failed(point: LoadPoint, stats: PointStats) -> str:
    reason = stats.error_kinds[0][0] if stats.error_kinds else "no reason"
    return f"{point.label}: all {stats.errors} finished requests failed ({reason})"


SCENARIO = Serving()
