"""``stall``: how long running streams stall when a long prompt arrives at a served model.

``streams`` streamed requests run (short prompts, ``stream_max_tokens`` each, EOS ignored);
once each has received ``arrive_after_tokens`` events (all are decoding: no fixed delay), one
request with a ``long_prompt_tokens`` prompt is sent. An engine that prefills the long prompt in
one piece stops every running stream for the whole prefill; one that chunks it
(``--prefill-step-size``, llama-server's ``-b``/``-ub``) or runs it beside decode stalls them
less. Measured (:mod:`~harness.scenarios.stall.analysis`): the baseline ITL before the
arrival, and while the long prompt prefills (its sending to its first token) the in-flight max
and p99 ITL, the stall (max less baseline) and the tokens lost; a chart of each stream's ITL
over time around the arrival is kept in the artifacts. A stall (max ITL at least
``stall_factor`` x baseline and ``min_stall_s``) is named in one line; with ``max_stall_s`` a
longer stall fails the case. Run it per engine and prefill step size (one model entry each).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from harness.backends.base import BackendCapability, Served
from harness.backends.openai_client import (
    ENDPOINT_PATHS,
    StreamReply,
    astream,
    async_client,
    generation_body,
    token_arrivals,
)
from harness.core.metrics import MetricSpec
from harness.core.types import Metric, Unit
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
from harness.scenarios.stall.analysis import StreamTokens, finding, stall, timeline
from harness.scenarios.streams.artifacts import reply_error
from harness.scenarios.streams.slo import PROMPT_PREFIX_TOKENS, REQUEST_TIMEOUT_S

PREFIX = "stall"
MAX_ITL = MetricSpec(
    f"{PREFIX}.max_itl_s",
    Unit.SECONDS,
    False,
    "max ITL while the long prompt prefilled",
    noise_floor=0.1,
)
P99_ITL = MetricSpec(
    f"{PREFIX}.p99_itl_s",
    Unit.SECONDS,
    False,
    "p99 ITL while the long prompt prefilled",
    noise_floor=0.1,
)
BASELINE = MetricSpec(
    f"{PREFIX}.baseline_itl_s",
    Unit.SECONDS,
    False,
    "median ITL before the long prompt",
    noise_floor=0.1,
)
STALL = MetricSpec(
    f"{PREFIX}.stall_s", Unit.SECONDS, False, "max ITL less the baseline", noise_floor=0.1
)
LOST = MetricSpec(
    f"{PREFIX}.tokens_lost",
    Unit.TOKENS,
    False,
    "tokens the running streams did not produce while it prefilled",
    noise_floor=0.1,
)
LONG_TTFT = MetricSpec(
    f"{PREFIX}.long_ttft_s",
    Unit.SECONDS,
    False,
    "the long prompt's time to first token",
    noise_floor=0.1,
)


class StallParams(Params):
    streams: int = Field(4, ge=1, le=64, description="streams running when the long prompt arrives")
    stream_prompt_tokens: int = Field(32, ge=8, description="each running stream's prompt (about)")
    stream_max_tokens: int = Field(256, ge=8, description="tokens each running stream asks for")
    long_prompt_tokens: int = Field(2048, ge=16, description="the arriving prompt (about)")
    arrive_after_tokens: int = Field(
        8, ge=2, description="events every stream has received before the long prompt is sent"
    )
    endpoint: Literal["chat", "completions"] = Field(
        "completions", description="chat or completions"
    )
    ignore_eos: bool = Field(True, description="ask the server to keep going past EOS")
    stall_factor: float = Field(5.0, gt=1, description="a stall: max ITL at least this x baseline")
    min_stall_s: float = Field(
        0.05, ge=0, description="and at least this long", json_schema_extra={"unit": "s"}
    )
    max_stall_s: float | None = Field(
        None,
        gt=0,
        description="a stall longer than this fails the case (unset: named only)",
        json_schema_extra={"unit": "s"},
    )
    max_seconds: float = Field(
        300.0,
        gt=0,
        le=3600,
        description="the case's requests are cut here",
        json_schema_extra={"unit": "s"},
    )

    @model_validator(mode="after")
    def _long_enough(self) -> StallParams:
        if self.stream_max_tokens < 4 * self.arrive_after_tokens:
            raise value_error(
                f"stream_max_tokens {self.stream_max_tokens} leaves too little after the arrival",
                f"ask at least {4 * self.arrive_after_tokens} (4 x arrive_after_tokens)",
            )
        return self


class _Arrival:
    """The running streams and the long prompt, on one clock (seconds after ``begin``)."""

    def __init__(self, model: Served, params: StallParams, short: str, long: str) -> None:
        self.model = model
        self.params = params
        self.short = short
        self.long = long
        self.path = ENDPOINT_PATHS[params.endpoint]
        self.marker = secrets.token_hex(3)
        self.begin = time.perf_counter()
        self.counts = [0] * params.streams
        self.ready = asyncio.Event()
        self.starts: list[float] = [0.0] * params.streams
        self.arrival_s: float | None = None

    def now(self) -> float:
        return time.perf_counter() - self.begin

    def _body(self, text: str, max_tokens: int) -> dict[str, Any]:
        p = self.params
        return generation_body(p.endpoint, text, max_tokens=max_tokens, ignore_eos=p.ignore_eos)

    async def _stream(self, client: Any, i: int) -> StreamReply:
        def seen(n: int) -> None:
            self.counts[i] = n
            if min(self.counts) >= self.params.arrive_after_tokens:
                self.ready.set()

        body = self._body(numbered(self.marker, i + 1, self.short), self.params.stream_max_tokens)
        self.starts[i] = self.now()
        return await astream(client, self.model.endpoint, self.path, body, on_events=seen)

    async def run(
        self, warmup: int
    ) -> tuple[str | None, list[tuple[int, StreamReply]], StreamReply | None]:
        p = self.params
        timeout = max(p.max_seconds, REQUEST_TIMEOUT_S)
        async with async_client(timeout, p.streams + 1) as client:
            for w in range(warmup):
                body = self._body(numbered(self.marker, -1 - w, self.short), 8)
                why = reply_error(await astream(client, self.model.endpoint, self.path, body))
                if why:
                    return why, [], None
            self.begin = time.perf_counter()
            streams = [asyncio.create_task(self._stream(client, i)) for i in range(p.streams)]
            waiter = asyncio.create_task(self.ready.wait())
            every = asyncio.gather(*streams, return_exceptions=True)
            # until every stream has had its events (one that already finished still counts:
            # the stall is measured on those still running), or all ended, or time is up
            either: list[asyncio.Future[Any]] = [waiter, every]
            await asyncio.wait(either, timeout=p.max_seconds, return_when=asyncio.FIRST_COMPLETED)
            long_reply = None
            if self.ready.is_set():
                self.arrival_s = self.now()
                body = self._body(numbered(self.marker, 0, self.long), 1)
                long_reply = await astream(client, self.model.endpoint, self.path, body)
            waiter.cancel()
            left = max(p.max_seconds - self.now(), 0.1)
            done, pending = await asyncio.wait(streams, timeout=left)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            replies = [(i, t.result()) for i, t in enumerate(streams) if t in done]
        return None, replies, long_reply


def _tokens(reply: StreamReply, start_s: float, counter: Any) -> StreamTokens:
    arrivals = token_arrivals(reply.chunks, counter)
    return StreamTokens(
        tuple(start_s + t for t in arrivals.chunk_times_s), tuple(arrivals.chunk_tokens)
    )


class StallScenario(BaseScenario[StallParams]):
    name: ClassVar[str] = "stall"
    version: ClassVar[int] = 1
    params_model = StallParams
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.HTTP})
    repeats_apply: ClassVar[bool] = False
    samples_from: ClassVar[str] = "tokens"
    metrics: ClassVar[tuple[MetricSpec, ...]] = (MAX_ITL, P99_ITL, BASELINE, STALL, LOST, LONG_TTFT)

    def workload(self, params: StallParams) -> Workload:
        return Workload(params.long_prompt_tokens, 1)

    def run(self, ctx: ScenarioContext, params: StallParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Served):
            return lacks(ctx, BackendCapability.HTTP)
        counter = model.token_counter
        short = text_of_about(max(params.stream_prompt_tokens - PROMPT_PREFIX_TOKENS, 1), counter)
        long = text_of_about(max(params.long_prompt_tokens - PROMPT_PREFIX_TOKENS, 1), counter)
        arrival = _Arrival(model, params, short, long)
        warm_failed, replies, long_reply = asyncio.run(arrival.run(ctx.warmup))
        if warm_failed:
            return ScenarioOutput((), failures=(f"the warm-up request failed: {warm_failed}",))
        failed = [why for _, r in replies if (why := reply_error(r))]
        if arrival.arrival_s is None or long_reply is None:
            why = (
                failed[0]
                if failed
                else (
                    f"not every stream had {params.arrive_after_tokens} events before they ended "
                    "or max_seconds passed (a server that runs them one after another, or streams "
                    "too short: raise stream_max_tokens)"
                )
            )
            return ScenarioOutput((), failures=(f"the long prompt was never sent: {why}",))
        long_why = reply_error(long_reply)
        if long_why:
            return ScenarioOutput((), failures=(f"the long prompt failed: {long_why}",))
        long_ttft = token_arrivals(long_reply.chunks, counter).ttft_s or long_reply.elapsed_s
        window_end = arrival.arrival_s + long_ttft
        streams = [_tokens(r, arrival.starts[i], counter) for i, r in replies]
        found = stall(
            streams, arrival.arrival_s, window_end, params.stall_factor, params.min_stall_s
        )
        line = finding(found, params.long_prompt_tokens, params.streams)
        margin = max(long_ttft, 20 * (found.baseline_itl_s or 0.0), 0.5)
        values = (
            (MAX_ITL, found.max_itl_s),
            (P99_ITL, found.p99_itl_s),
            (BASELINE, found.baseline_itl_s),
            (STALL, found.stall_s),
            (LOST, found.tokens_lost),
            (LONG_TTFT, long_ttft),
        )
        metrics = [Metric(s.name, s.unit, (float(v),)) for s, v in values if v is not None]
        prompt = numbered(arrival.marker, 0, long)
        artifacts: dict[str, Any] = {
            "engine": model.engine,
            "endpoint": params.endpoint,
            "counted_by": "tokenizer" if counter is not None else "chunks",
            "streams": params.streams,
            "long_prompt_tokens": counter(prompt)
            if counter is not None
            else params.long_prompt_tokens,
            "arrival_s": round(arrival.arrival_s, 6),
            "window_s": round(found.window_s, 6),
            "running": found.running,
            "stalled": found.stalled,
            "finding": line,
            "stream_failures": failed[:5],
            "timeline": timeline(streams, arrival.arrival_s, window_end, margin),
        }
        failures: list[str] = []
        if failed:
            failures.append(
                f"{len(failed)} of {params.streams} running streams failed: {failed[0]}"
            )
        if (
            params.max_stall_s is not None
            and found.stall_s is not None
            and found.stalled
            and found.max_itl_s is not None
            and found.max_itl_s > params.max_stall_s
        ):
            failures.append(line)
        return ScenarioOutput(tuple(metrics), artifacts, failures=tuple(failures))


SCENARIO = StallScenario()
