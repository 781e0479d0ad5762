"""``saturation``: the saturation knee of a served model, the highest load that meets the
suite's SLO, with a bootstrap interval, found by a search that stops on the server's behaviour.

Open loop (``loop: rate``, Poisson arrivals at a request rate) or closed loop (``loop:
concurrency``). From ``start`` the load is multiplied by ``growth`` until a point
over-saturates the server (its queue grows without bound: TTFT and the requests in flight
climb over the point, or requests are still in flight at its bound), until ``max_value``, or
(closed loop) until a point misses the SLO; then ``refine`` points bisect between the last
point meeting the SLO and the first missing it (:mod:`~harness.scenarios.saturation.search`).
Each point is the serving scenario's: its requests sent by the same loops, bounded in requests
and seconds, judged by the same p90 rule (:mod:`harness.scenarios.streams.stats`).

Per point: the serving figures, the share of bootstrap resamples that met the SLO and each
threshold's p90 interval (:mod:`~harness.scenarios.saturation.bootstrap`). Per case, one number
comparable across runs and gated like any metric: ``saturation.knee_rps`` (or
``knee_concurrency``), with its interval as ``knee_low_*`` / ``knee_high_*``
(:mod:`~harness.scenarios.saturation.knee`). No point meeting the SLO fails the case.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from harness.backends.base import BackendCapability, Served
from harness.backends.openai_client import ENDPOINT_PATHS, async_client
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
from harness.scenarios.prompts import text_of_about
from harness.scenarios.saturation.knee import Knee, KneePoint, knee
from harness.scenarios.saturation.points import Measured, Requester, Shape, measured, run_point
from harness.scenarios.saturation.search import KneeSearch, Reading, StopReason
from harness.scenarios.streams.artifacts import reply_error
from harness.scenarios.streams.schedule import MAX_RATE, MIN_RATE, LoadPoint, closed, open_rate
from harness.scenarios.streams.slo import PROMPT_PREFIX_TOKENS, REQUEST_TIMEOUT_S, SloParams
from harness.scenarios.streams.stats import MIN_FINISHED

PREFIX = "saturation"
MAX_CONCURRENCY = 1024


def knee_specs(loop: str) -> tuple[MetricSpec, ...]:
    """The knee and its interval, for an open loop (req/s) or a closed one (concurrency)."""
    if loop == "rate":
        suffix, unit, what = "rps", Unit.REQUESTS_PER_SECOND, "request rate"
    else:
        suffix, unit, what = "concurrency", Unit.COUNT, "concurrency"
    return (
        MetricSpec(
            f"{PREFIX}.knee_{suffix}",
            unit,
            True,
            f"highest {what} meeting the SLO",
            noise_floor=0.1,
        ),
        MetricSpec(
            f"{PREFIX}.knee_low_{suffix}",
            unit,
            True,
            f"lower bound of the knee's bootstrap interval ({what})",
            noise_floor=0.1,
        ),
        MetricSpec(
            f"{PREFIX}.knee_high_{suffix}",
            unit,
            True,
            f"upper bound of the knee's bootstrap interval ({what})",
            noise_floor=0.1,
        ),
    )


class SaturationParams(Params):
    loop: Literal["rate", "concurrency"] = Field(
        "rate", description="rate: open loop, Poisson arrivals; concurrency: closed loop"
    )
    start: float = Field(1.0, gt=0, description="the first point: requests/s, or concurrency")
    growth: float = Field(2.0, ge=1.25, le=10, description="each ramp point is the last times this")
    max_value: float = Field(
        64.0, gt=0, description="the search's ceiling (requests/s or concurrency)"
    )
    refine: int = Field(
        2, ge=0, le=8, description="points that bisect around the knee after the ramp"
    )
    max_points: int = Field(10, ge=1, le=40, description="points measured at most, ramp and refine")
    requests_per_point: int = Field(
        32, ge=MIN_FINISHED, le=100_000, description="requests a point sends"
    )
    max_seconds_per_point: float = Field(
        120.0,
        gt=0,
        le=3600,
        description="a point's bound (a safety net: the search stops on the server's behaviour)",
        json_schema_extra={"unit": "s"},
    )
    prompt_tokens: int = Field(128, ge=8, description="prompt length in tokens (about)")
    max_tokens: int = Field(64, ge=1, description="tokens each request asks for")
    endpoint: Literal["chat", "completions"] = Field(
        "chat", description="chat: one user turn, templated; completions: the raw text"
    )
    ignore_eos: bool = Field(True, description="ask the server to keep going past EOS")
    seed: int = Field(0, description="seed of the arrival times and the bootstrap")
    burstiness: float = Field(1.0, gt=0, description="gamma shape of inter-arrival times")
    slo: SloParams = Field(description="p90 thresholds a point must meet")
    confidence: float = Field(0.95, gt=0.5, lt=1, description="of the bootstrap intervals")
    resamples: int = Field(1000, ge=100, le=20_000, description="bootstrap resamples a point")

    @model_validator(mode="after")
    def _range(self) -> SaturationParams:
        top = MAX_RATE if self.loop == "rate" else MAX_CONCURRENCY
        bottom = MIN_RATE if self.loop == "rate" else 1
        for name in ("start", "max_value"):
            value = getattr(self, name)
            if not bottom <= value <= top:
                raise value_error(f"{name} {value:g} is out of range", f"use {bottom:g} to {top:g}")
        if self.start > self.max_value:
            raise value_error(
                f"start {self.start:g} is above max_value {self.max_value:g}",
                "start at or below the ceiling",
            )
        return self

    def search(self) -> KneeSearch:
        integer = self.loop == "concurrency"
        return KneeSearch(
            start=self.start,
            growth=self.growth,
            ceiling=self.max_value,
            refine=self.refine,
            max_points=self.max_points,
            integer=integer,
            floor=1.0 if integer else MIN_RATE,
        )

    def connections(self) -> int:
        if self.loop == "concurrency":
            return int(self.max_value)
        return self.requests_per_point


def _point(loop: str, value: float) -> LoadPoint:
    return closed(int(value)) if loop == "concurrency" else open_rate(value)


class _Search:
    """One case's search: the points measured in the order the search asked for them."""

    def __init__(self, model: Served, params: SaturationParams, text: str) -> None:
        self.params = params
        self.counter = model.token_counter
        shape = Shape(
            ENDPOINT_PATHS[params.endpoint],
            params.endpoint,
            text,
            params.max_tokens,
            params.ignore_eos,
            params.requests_per_point,
            params.max_seconds_per_point,
            params.seed,
            params.burstiness,
        )
        self.requester = Requester(model, shape)
        self.search = params.search()
        self.points: list[Measured] = []

    async def run(self, warmup: int) -> str | None:
        """Measure until the search is over; the warm-up's failure (None: it went well)."""
        import numpy as np

        p = self.params
        rng = np.random.default_rng(p.seed)
        timeout = max(p.max_seconds_per_point, REQUEST_TIMEOUT_S)
        slo = p.slo.thresholds()
        async with async_client(timeout, p.connections()) as client:
            for _ in range(warmup):
                why = reply_error(await self.requester.send(client))
                if why:
                    return why
            while (value := self.search.next_value()) is not None:
                point = _point(p.loop, value)
                run = await run_point(self.requester, client, point)
                done = measured(
                    point,
                    len(self.points),
                    run,
                    self.counter,
                    slo,
                    p.resamples,
                    p.confidence,
                    rng,
                )
                self.points.append(done)
                self.search.record(Reading(value, done.met, done.oversaturated, done.all_failed))
        return None


def _knee(points: list[Measured], confidence: float) -> Knee:
    return knee(
        [
            KneePoint(m.point.value, m.record["good"], m.oversaturated is None, m.boot.met)
            for m in points
        ],
        confidence,
    )


def _finding(params: SaturationParams, found: Knee, stop: StopReason | None) -> str:
    unit = "req/s" if params.loop == "rate" else "concurrent requests"
    if found.value is None:
        return f"no point met the SLO ({unit}; search stopped: {stop.value if stop else '?'})"
    text = f"knee {found.value:g} {unit}"
    if found.low is not None and found.high is not None:
        text += f" ({params.confidence:.0%} interval {found.low:g}–{found.high:g})"
    if stop is StopReason.CEILING:
        text += f"; at the search's ceiling {params.max_value:g}: at least this"
    elif stop is not None:
        text += f"; search stopped: {stop.value}"
    return text


class Saturation(BaseScenario[SaturationParams]):
    name: ClassVar[str] = "saturation"
    version: ClassVar[int] = 1
    params_model = SaturationParams
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.HTTP})
    repeats_apply: ClassVar[bool] = False  # a point's samples are its requests
    samples_from: ClassVar[str] = "requests"
    metrics: ClassVar[tuple[MetricSpec, ...]] = knee_specs("rate") + knee_specs("concurrency")

    def workload(self, params: SaturationParams) -> Workload:
        return Workload(params.prompt_tokens, params.max_tokens)

    def run(self, ctx: ScenarioContext, params: SaturationParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Served):
            return lacks(ctx, BackendCapability.HTTP)
        counter = model.token_counter
        text = text_of_about(max(params.prompt_tokens - PROMPT_PREFIX_TOKENS, 1), counter)
        search = _Search(model, params, text)
        warm_failed = asyncio.run(search.run(ctx.warmup))
        if warm_failed:
            return ScenarioOutput((), failures=(f"the warm-up request failed: {warm_failed}",))
        found = _knee(search.points, params.confidence)
        stop = search.search.stop_reason
        finding = _finding(params, found, stop)
        metrics = _knee_metrics(params.loop, found)
        prompt = search.requester.prompt(0)
        artifacts: dict[str, Any] = {
            "engine": model.engine,
            "endpoint": params.endpoint,
            "loop": params.loop,
            "counted_by": "tokenizer" if counter is not None else "chunks",
            "prompt_tokens_counted": counter(prompt) if counter is not None else None,
            "slo": params.slo.model_dump(),
            "confidence": params.confidence,
            "points": sorted((m.record for m in search.points), key=lambda r: r["value"]),
            "knee": {
                "value": found.value,
                "low": found.low,
                "high": found.high,
                "resamples": found.resamples,
                "at_ceiling": stop is StopReason.CEILING,
            },
            "stop_reason": stop.value if stop else None,
            "finding": finding,
        }
        failures = () if found.value is not None else (finding,)
        return ScenarioOutput(tuple(metrics), artifacts, failures=failures)


def _knee_metrics(loop: str, found: Knee) -> list[Metric]:
    value, low, high = knee_specs(loop)
    out = []
    for spec, number in ((value, found.value), (low, found.low), (high, found.high)):
        if number is not None:
            out.append(Metric(spec.name, spec.unit, (float(number),)))
    return out


SCENARIO = Saturation()
