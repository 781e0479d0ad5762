"""``trace_replay``: a request trace replayed against a server on its timestamps.

The trace (``trace:``, a file; :mod:`harness.scenarios.trace_replay.trace` reads the harness's
JSON Lines, Mooncake's and BurstGPT's shapes) gives each request's arrival, its input and output
lengths, the prompt blocks it shares with others (a shared system prompt, a shared document) and
its session (multi-turn: a turn's prompt holds the turns before it and their answers). Each
request is sent at its arrival time divided by ``speedup`` (0.5: half speed, 2: twice as fast),
streamed, greedy, asking for its output length (``ignore_eos``); requests still in flight at
``max_seconds`` are cut.

Figures, as ``serving`` defines them, over the whole replay: completed and failed requests,
request and output throughput, TTFT, TPOT, ITL and e2e p50/p90/p99, goodput under ``slo:``; and
the replay's own fidelity: each request's dispatch lag (sent minus due). When more than a tenth
of the requests were sent later than ``max_lag_s``, the replay was off its timestamps and the
case fails saying so: its latencies are those of another load, not the trace's.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.backends.base import BackendCapability, Served
from harness.backends.openai_client import StreamReply, async_client
from harness.core.metrics import MetricSpec
from harness.core.types import Metric, Unit
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
)
from harness.scenarios.streams.artifacts import point_record, reply_error, request_sample
from harness.scenarios.streams.loop import LoopRun, Sent
from harness.scenarios.streams.metrics import FIGURES, figure_values
from harness.scenarios.streams.schedule import MAX_RATE, MIN_RATE, open_rate
from harness.scenarios.streams.slo import SloParams
from harness.scenarios.streams.stats import percentiles, point_stats
from harness.scenarios.trace_replay.prompts import PromptBook
from harness.scenarios.trace_replay.replay import Replied, plan_replay, replay
from harness.scenarios.trace_replay.trace import TraceError, read_trace

PREFIX = "trace_replay"
LATE_SHARE = 0.1  # more than this share of requests later than max_lag_s: off its timestamps
LAG_P90 = MetricSpec(
    f"{PREFIX}.dispatch_lag_p90_s",
    Unit.SECONDS,
    False,
    "p90 of each request's dispatch lag (sent minus due by the trace)",
    noise_floor=0.01,
)
LAG_MAX = MetricSpec(
    f"{PREFIX}.dispatch_lag_max_s",
    Unit.SECONDS,
    False,
    "the largest dispatch lag",
    noise_floor=0.01,
)
WAIT_MAX = MetricSpec(
    f"{PREFIX}.session_wait_max_s",
    Unit.SECONDS,
    False,
    "the longest a session's turn waited for the answer to the turn before",
    noise_floor=0.05,
)


def _specs() -> tuple[MetricSpec, ...]:
    figures = tuple(
        MetricSpec(
            f"{PREFIX}.{f.suffix}",
            f.unit,
            f.higher_is_better,
            f"{f.description} (the whole replay)",
            noise_floor=f.noise_floor,
        )
        for f in FIGURES
    )
    return (*figures, LAG_P90, LAG_MAX, WAIT_MAX)


class TraceReplayParams(Params):
    trace: str = Field(
        description="the trace file (JSON Lines or CSV), relative to the working directory "
        "(as sessions_file)",
    )
    speedup: float = Field(
        1.0, gt=0, le=1000, description="replay this many times as fast as the trace (0.5: half)"
    )
    max_requests: int | None = Field(
        None, ge=1, description="replay the first this many requests (unset: all)"
    )
    max_seconds: float = Field(
        300.0,
        gt=0,
        le=86_400,
        description="the replay ends here; requests in flight are cut",
        json_schema_extra={"unit": "s"},
    )
    block_tokens: int = Field(
        512, ge=8, description="tokens a shared prompt block holds (Mooncake's hash_ids: 512)"
    )
    endpoint: Literal["chat", "completions"] = Field(
        "completions", description="completions: the raw text; chat: a user turn per request"
    )
    ignore_eos: bool = Field(
        True, description="ask the server to keep going past EOS (llama-server's ignore_eos)"
    )
    max_lag_s: float = Field(
        0.25,
        gt=0,
        description="a request sent later than this after its time is late; more than a tenth "
        "late fails the case (the replay was off its timestamps)",
        json_schema_extra={"unit": "s"},
    )
    slo: SloParams | None = Field(None, description="p90 thresholds for goodput")


def late_line(lags: list[float], max_lag_s: float) -> str | None:
    """Why the replay was off its timestamps, or None when it kept to them."""
    late = [lag for lag in lags if lag > max_lag_s]
    if not lags or len(late) <= LATE_SHARE * len(lags):
        return None
    return (
        f"replayed off its timestamps: {len(late)} of {len(lags)} requests were sent more than "
        f"{max_lag_s:g} s late (the worst {max(late):.3f} s), so its latencies are those of "
        "another load; free the machine or lower speedup"
    )


class TraceReplay(BaseScenario[TraceReplayParams]):
    name: ClassVar[str] = "trace_replay"
    version: ClassVar[int] = 1
    params_model = TraceReplayParams
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.HTTP})
    repeats_apply: ClassVar[bool] = False  # the trace's requests are the samples
    samples_from: ClassVar[str] = "requests"
    metrics: ClassVar[tuple[MetricSpec, ...]] = _specs()

    def workload(self, params: TraceReplayParams) -> Workload | None:
        return None  # the trace decides, read when the case runs

    def run(self, ctx: ScenarioContext, params: TraceReplayParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Served):
            return lacks(ctx, BackendCapability.HTTP)
        try:
            trace = read_trace(Path(params.trace).expanduser(), params.block_tokens)
        except TraceError as exc:
            return ScenarioOutput((), failures=(str(exc),))
        requests = trace.requests[: params.max_requests]
        book = PromptBook(secrets.token_hex(3), model.token_counter)
        plan = plan_replay(
            requests,
            book,
            speedup=params.speedup,
            endpoint=params.endpoint,
            ignore_eos=params.ignore_eos,
        )

        async def go() -> LoopRun[Replied]:
            async with async_client(params.max_seconds + 60, max(len(requests), 1)) as client:
                return await replay(client, model.endpoint, plan, params.max_seconds)

        run = asyncio.run(go())
        replies = _as_replies(run)
        as_sent = list(replies.finished)
        samples = [request_sample(s, model.token_counter) for s in as_sent]
        slo = params.slo.thresholds() if params.slo else None
        stats = point_stats(samples, run.cut, run.duration_s, slo)
        lags = [s.start_s - s.due_s for s in run.finished if s.due_s is not None]
        waits = [s.result.session_wait_s for s in run.finished]
        values = figure_values(stats)
        metrics = [
            Metric(f"{PREFIX}.{f.suffix}", f.unit, (value,))
            for f in FIGURES
            if (value := values[f.suffix]) is not None
        ]
        lag_p90 = percentiles(lags).at(90)
        if lag_p90 is not None:
            metrics.append(Metric(LAG_P90.name, LAG_P90.unit, (lag_p90,)))
        if lags:
            metrics.append(Metric(LAG_MAX.name, LAG_MAX.unit, (max(lags),)))
        if trace.sessions:
            metrics.append(Metric(WAIT_MAX.name, WAIT_MAX.unit, (max(waits, default=0.0),)))
        failures = [why] if (why := late_line(lags, params.max_lag_s)) else []
        if stats.completed == 0 and stats.errors:
            first = next(e for r in as_sent if (e := reply_error(r.result)))
            failures.append(f"all {stats.errors} finished requests failed ({first})")
        rate = len(requests) / trace.span_s * params.speedup if trace.span_s > 0 else 1.0
        point = open_rate(min(max(rate, MIN_RATE), MAX_RATE))
        record = point_record(point, replies, stats, samples)
        artifacts: dict[str, Any] = {
            "engine": model.engine,
            "trace": {
                "file": Path(trace.source).name,
                "format": trace.format.value,
                "requests": len(requests),
                "of": len(trace.requests),
                "span_s": round(trace.span_s, 6),
                "sessions": trace.sessions,
                "shared_blocks": sum(bool(r.blocks) for r in requests),
            },
            "speedup": params.speedup,
            "dispatch_lag_s": [round(lag, 6) for lag in lags[:2000]],
            "replay": record,
        }
        return ScenarioOutput(tuple(metrics), artifacts, failures=tuple(failures))


def _as_replies(run: LoopRun[Replied]) -> LoopRun[StreamReply]:
    return LoopRun(
        tuple(Sent(s.index, s.start_s, s.due_s, s.result.reply) for s in run.finished),
        run.cut,
        run.duration_s,
        run.hit_deadline,
        run.max_in_flight,
    )


SCENARIO = TraceReplay()
