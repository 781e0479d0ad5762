"""``soak``: a served model under steady load for many requests, its memory watched: does the
server grow until the machine falls over (mlx-lm issues #883, #1666, #1807)?

``requests`` streamed requests (each prompt new to the server, as real clients' are), closed
loop at ``concurrency``, bounded in ``max_seconds``; meanwhile the server's memory is read every
``sample_every_s`` (:mod:`harness.scenarios.soak.sampler`): RSS, the physical footprint on
macOS (what MLX's Metal buffers count in; the fitted figure where there is one), swap in use and
memory pressure, and once the Metal wired limit.

Verdicts (:mod:`harness.scenarios.soak.growth`): ``growth``, the memory's slope per request
after the first ``settle_share`` of them with its 95% interval, against
``max_growth_mib_per_1000`` (fails when the whole interval is beyond it, inconclusive when it
straddles it or the fit spans fewer than 100 requests: caches fill over the first ones); and
the drift of the e2e p99 (or the highest percentile the windows have) from the first of
``windows`` windows of requests to the last, failing beyond ``max_latency_drift`` when one is
set.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.backends.base import BackendCapability, Served
from harness.backends.host_memory import metal_wired_limit_bytes
from harness.backends.openai_client import (
    ENDPOINT_PATHS,
    StreamReply,
    astream,
    async_client,
    generation_body,
)
from harness.core.check_types import CheckStatus, CheckVerdict
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
from harness.scenarios.prompts import numbered, text_of_about
from harness.scenarios.soak.growth import (
    MIB,
    Drift,
    Growth,
    GrowthVerdict,
    Window,
    fit_growth,
    latency_drift,
    windows,
)
from harness.scenarios.soak.sampler import Reading, Sampler
from harness.scenarios.streams.artifacts import reply_error, request_sample
from harness.scenarios.streams.loop import LoopRun, closed_loop
from harness.scenarios.streams.stats import QUANTILES, RequestSample, percentiles

REQUEST_TIMEOUT_S = 300.0
READINGS_KEPT = 2000  # memory readings a case keeps in its artifacts (evenly thinned)
PROMPT_PREFIX_TOKENS = 4
MIN_SPANNED_REQUESTS = 100  # requests a growth fit must span to be judged
CASE_MARGIN_S = 30.0  # the soak ends this long before the case's time limit at the latest

GROWTH = MetricSpec(
    "soak.growth_bytes_per_1000",
    Unit.BYTES,
    False,
    "server memory growth per 1,000 requests (Theil-Sen slope after the settle share)",
    noise_floor=0.5,
)
MEMORY_END = MetricSpec(
    "soak.memory_end_bytes", Unit.BYTES, False, "server memory at the soak's end", noise_floor=0.05
)
COMPLETED = MetricSpec("soak.completed", Unit.COUNT, True, "requests completed", noise_floor=0.0)
ERRORS = MetricSpec("soak.errors", Unit.COUNT, False, "requests that failed", noise_floor=0.0)
E2E_P99 = MetricSpec(
    "soak.e2e_p99_s", Unit.SECONDS, False, "end-to-end request time p99", noise_floor=0.15
)
DRIFT = MetricSpec(
    "soak.latency_drift",
    Unit.RATIO,
    False,
    "last window's e2e p99 over the first's (the highest percentile both have)",
    noise_floor=0.1,
)


class SoakParams(Params):
    requests: int = Field(300, ge=10, le=10_000_000, description="requests the soak sends")
    concurrency: int = Field(2, ge=1, le=256, description="requests kept in flight")
    max_seconds: float = Field(
        600.0,
        gt=0,
        le=7 * 86400,
        description="the soak ends here; requests in flight are cut",
        json_schema_extra={"unit": "s"},
    )
    prompt_tokens: int = Field(64, ge=8, description="prompt length in tokens (about)")
    max_tokens: int = Field(32, ge=1, description="tokens each request asks for")
    endpoint: Literal["chat", "completions"] = Field(
        "chat", description="chat: one user turn, templated; completions: the raw text"
    )
    ignore_eos: bool = Field(True, description="ask the server to keep going past EOS")
    sample_every_s: float = Field(
        0.5,
        gt=0,
        le=600,
        description="the server's memory read this often",
        json_schema_extra={"unit": "s"},
    )
    settle_share: float = Field(
        0.1, ge=0, lt=0.9, description="share of requests at the start left out of the slope"
    )
    max_growth_mib_per_1000: float = Field(
        64.0, gt=0, description="memory growth bound, MiB per 1,000 requests"
    )
    windows: int = Field(3, ge=2, le=50, description="request windows for the latency drift")
    max_latency_drift: float | None = Field(
        None, gt=1, description="fail when the last window's p99 exceeds the first's this often"
    )


class _Soak:
    def __init__(self, model: Served, params: SoakParams, text: str) -> None:
        self.model = model
        self.params = params
        self.text = text
        self.path = ENDPOINT_PATHS[params.endpoint]
        self.serial = itertools.count()
        self.marker = secrets.token_hex(3)
        self.done = 0

    def body(self) -> dict[str, Any]:
        p = self.params
        prompt = numbered(self.marker, next(self.serial), self.text)
        return generation_body(p.endpoint, prompt, max_tokens=p.max_tokens, ignore_eos=p.ignore_eos)

    async def run(
        self, warmup: int, max_seconds: float
    ) -> tuple[list[StreamReply], LoopRun[StreamReply] | None, Sampler]:
        p = self.params
        sampler = Sampler(self.model, lambda: self.done, p.sample_every_s)
        async with async_client(max(REQUEST_TIMEOUT_S, 1.0), p.concurrency) as client:

            async def send(index: int) -> StreamReply:
                reply = await astream(client, self.model.endpoint, self.path, self.body())
                self.done += 1
                return reply

            warm = [await send(-1) for _ in range(warmup)]
            if any(reply_error(r) for r in warm):
                return warm, None, sampler
            self.done = 0
            sampler = Sampler(self.model, lambda: self.done, p.sample_every_s)
            watching = asyncio.create_task(sampler.run())
            try:
                run = await closed_loop(send, p.concurrency, p.requests, max_seconds)
            finally:
                watching.cancel()
                await asyncio.gather(watching, return_exceptions=True)
            await sampler.read()  # the memory at the end
        return warm, run, sampler


def _series(readings: Sequence[Reading]) -> dict[str, list[Any]]:
    """The readings as columns, thinned evenly to :data:`READINGS_KEPT` (first and last kept)."""
    n = len(readings)
    if n > READINGS_KEPT:
        step = (n - 1) / (READINGS_KEPT - 1)
        readings = [readings[round(i * step)] for i in range(READINGS_KEPT)]
    return {
        "t_s": [round(r.t_s, 3) for r in readings],
        "requests": [r.requests for r in readings],
        "rss_bytes": [r.rss_bytes for r in readings],
        "footprint_bytes": [r.footprint_bytes for r in readings],
        "swap_used_bytes": [r.swap_used_bytes for r in readings],
        "pressure": [r.pressure for r in readings],
        "stall_pct": [r.stall_pct for r in readings],
        "of": [n],
    }


def _measure(readings: Sequence[Reading]) -> tuple[str, list[int]]:
    """The series the growth is fitted on: the physical footprint where every reading has
    one (macOS), else RSS."""
    footprints = [r.footprint_bytes for r in readings]
    if footprints and all(f is not None for f in footprints):
        return "phys_footprint", [f for f in footprints if f is not None]
    return "rss", [r.rss_bytes for r in readings]


def growth_check(
    growth: Growth | None, bound_mib: float, measure: str, why_not: str | None
) -> CheckVerdict:
    name = "growth"
    if why_not is not None:
        return CheckVerdict(name, CheckStatus.UNJUDGED, f"server memory n/a: {why_not}")
    if growth is None:
        reason = (
            "too few memory readings after the settle share to fit a slope: run more requests "
            "or read more often (sample_every_s)"
        )
        return CheckVerdict(name, CheckStatus.UNJUDGED, reason)
    bound = bound_mib * MIB / 1000
    per = growth.per_1000_mib
    said = (
        f"server memory ({measure}) grew {per(growth.bytes_per_request):.1f} MiB per 1,000 "
        "requests "
        f"(95% interval {per(growth.low):.1f} to {per(growth.high):.1f}; requests "
        f"{growth.from_request}-{growth.to_request}, {growth.samples} readings)"
    )
    spanned = growth.to_request - growth.from_request
    if spanned < MIN_SPANNED_REQUESTS:
        return CheckVerdict(
            name,
            CheckStatus.UNJUDGED,
            f"inconclusive: {said}: the fit spans {spanned} requests, a verdict needs "
            f"{MIN_SPANNED_REQUESTS} (caches fill over the first ones); raise requests or "
            "max_seconds",
        )
    verdict = growth.verdict(bound)
    if verdict is GrowthVerdict.BEYOND:
        return CheckVerdict(name, CheckStatus.FAIL, f"{said}: beyond the bound of {bound_mib:g}")
    if verdict is GrowthVerdict.WITHIN:
        return CheckVerdict(name, CheckStatus.PASS, f"{said}: within the bound of {bound_mib:g}")
    return CheckVerdict(
        name,
        CheckStatus.UNJUDGED,
        f"inconclusive: {said}: the interval straddles the bound of {bound_mib:g}; run more "
        "requests",
    )


def drift_check(drift: Drift | None, bound: float | None) -> CheckVerdict:
    name = "latency_drift"
    if drift is None:
        return CheckVerdict(
            name, CheckStatus.UNJUDGED, "too few completed requests per window for a percentile"
        )
    said = (
        f"e2e p{drift.quantile} {drift.first_s:.3f} s in the first window, {drift.last_s:.3f} s "
        f"in the last ({drift.ratio:.2f}x)"
    )
    if bound is not None and drift.ratio > bound:
        return CheckVerdict(name, CheckStatus.FAIL, f"{said}: beyond {bound:g}x")
    return CheckVerdict(name, CheckStatus.PASS, said)


def request_windows(samples: Sequence[RequestSample], count: int) -> list[Window]:
    ordered = sorted(samples, key=lambda s: s.index)
    return windows(
        [s.e2e_s if s.ok else None for s in ordered],
        [s.ttft_s if s.ok else None for s in ordered],
        count,
    )


def _window_record(found: Sequence[Window]) -> list[dict[str, Any]]:
    return [
        {
            "first": w.first,
            "last": w.last,
            **{f"e2e_p{q}_s": w.e2e[i] for i, q in enumerate(QUANTILES)},
            **{f"ttft_p{q}_s": w.ttft[i] for i, q in enumerate(QUANTILES)},
        }
        for w in found
    ]


class Soak(BaseScenario[SoakParams]):
    name: ClassVar[str] = "soak"
    version: ClassVar[int] = 1
    params_model = SoakParams
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.HTTP})
    repeats_apply: ClassVar[bool] = False  # its samples are its requests and memory readings
    samples_from: ClassVar[str] = "requests"
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        GROWTH,
        MEMORY_END,
        COMPLETED,
        ERRORS,
        E2E_P99,
        DRIFT,
    )
    headline_metrics: ClassVar[tuple[str, ...]] = (GROWTH.name,)

    def workload(self, params: SoakParams) -> Workload:
        return Workload(params.prompt_tokens, params.max_tokens)

    def run(self, ctx: ScenarioContext, params: SoakParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Served):
            return lacks(ctx, BackendCapability.HTTP)
        counter = model.token_counter
        text = text_of_about(max(params.prompt_tokens - PROMPT_PREFIX_TOKENS, 1), counter)
        max_seconds = params.max_seconds
        left = ctx.time_left_s()
        if left is not None:  # end before the case's time limit, with what was measured
            max_seconds = max(min(max_seconds, left - CASE_MARGIN_S), 1.0)
        soak = _Soak(model, params, text)
        warm, run, sampler = asyncio.run(soak.run(ctx.warmup, max_seconds))
        failed = [why for r in warm if (why := reply_error(r))]
        if failed or run is None:
            reason = failed[0] if failed else "no reason"
            return ScenarioOutput((), failures=(f"the warm-up request failed: {reason}",))
        return _output(model, params, run, sampler)


def _output(
    model: Served, params: SoakParams, run: LoopRun[StreamReply], sampler: Sampler
) -> ScenarioOutput:
    samples = [request_sample(sent, model.token_counter) for sent in run.finished]
    done = [s for s in samples if s.ok]
    readings = sampler.readings
    measure, memory = _measure(readings)
    settle_from = int(params.settle_share * len(samples))
    growth = fit_growth([r.requests for r in readings], memory, settle_from)
    found = request_windows(samples, params.windows)
    drift = latency_drift(found)
    checks = (
        growth_check(growth, params.max_growth_mib_per_1000, measure, sampler.why_not),
        drift_check(drift, params.max_latency_drift),
    )
    e2e = percentiles([s.e2e_s for s in done])
    metrics = [
        Metric(COMPLETED.name, COMPLETED.unit, (float(len(done)),)),
        Metric(ERRORS.name, ERRORS.unit, (float(len(samples) - len(done)),)),
    ]
    if growth is not None:
        metrics.append(Metric(GROWTH.name, GROWTH.unit, (growth.bytes_per_request * 1000,)))
    if memory:
        metrics.append(Metric(MEMORY_END.name, MEMORY_END.unit, (float(memory[-1]),)))
    if (p99 := e2e.at(99)) is not None:
        metrics.append(Metric(E2E_P99.name, E2E_P99.unit, (p99,)))
    if drift is not None:
        metrics.append(Metric(DRIFT.name, DRIFT.unit, (drift.ratio,)))
    kinds: dict[str, int] = {}
    for s in samples:
        if s.error is not None:
            kinds[s.error] = kinds.get(s.error, 0) + 1
    artifacts: dict[str, Any] = {
        "engine": model.engine,
        "endpoint": params.endpoint,
        "sent": run.sent,
        "completed": len(done),
        "errors": len(samples) - len(done),
        "cut": run.cut,
        "duration_s": round(run.duration_s, 3),
        "hit_deadline": run.hit_deadline,
        "measure": measure,
        "memory_why_not": sampler.why_not,
        "wired_limit_bytes": metal_wired_limit_bytes(),
        "settle_from_request": settle_from,
        "bound_mib_per_1000": params.max_growth_mib_per_1000,
        "growth": None
        if growth is None
        else {
            "bytes_per_request": growth.bytes_per_request,
            "low": growth.low,
            "high": growth.high,
            "readings": growth.samples,
            "from_request": growth.from_request,
            "to_request": growth.to_request,
        },
        "memory": _series(readings),
        "windows": _window_record(found),
        "drift": None
        if drift is None
        else {"quantile": drift.quantile, "first_s": drift.first_s, "last_s": drift.last_s},
        "error_kinds": sorted(kinds.items(), key=lambda kv: -kv[1])[:5],
        "checks": [{"name": c.name, "status": c.status.value, "reason": c.reason} for c in checks],
    }
    failures = tuple(f"{c.name}: {c.reason}" for c in checks if c.status is CheckStatus.FAIL)
    if samples and not done:
        failures += (f"all {len(samples)} finished requests failed",)
    return ScenarioOutput(tuple(metrics), artifacts, failures=failures, checks=checks)


SCENARIO = Soak()
