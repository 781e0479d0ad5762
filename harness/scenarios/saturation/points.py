"""Measuring one point of the knee search: its requests sent by the serving scenario's loops,
read into per-request samples, judged against the SLO, resampled, and checked for a growing
queue; and the record the report redraws the knee curve from."""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.backends.base import Served
from harness.backends.openai_client import StreamReply, astream, generation_body
from harness.scenarios.prompts import numbered
from harness.scenarios.saturation.bootstrap import PointBootstrap, point_bootstrap
from harness.scenarios.saturation.oversaturation import oversaturated
from harness.scenarios.streams.artifacts import point_record, request_sample
from harness.scenarios.streams.loop import LoopRun, closed_loop, open_loop
from harness.scenarios.streams.schedule import LoadPoint, LoopKind, arrival_offsets
from harness.scenarios.streams.stats import PointStats, RequestSample, Slo, SloVerdict, point_stats

if TYPE_CHECKING:
    import httpx
    import numpy as np


@dataclass(frozen=True)
class Shape:
    """What every request of a case asks, and how a point is bounded."""

    path: str
    endpoint: str
    text: str
    max_tokens: int
    ignore_eos: bool
    requests_per_point: int
    max_seconds_per_point: float
    seed: int
    burstiness: float


@dataclass(frozen=True)
class Measured:
    point: LoadPoint
    order: int  # when it was measured (0: first)
    stats: PointStats
    boot: PointBootstrap
    oversaturated: str | None
    record: dict[str, Any]

    @property
    def met(self) -> bool:
        return self.stats.slo_verdict is SloVerdict.MET

    @property
    def all_failed(self) -> bool:
        return self.stats.completed == 0 and self.stats.errors > 0


class Requester:
    """Sends a case's requests: each prompt numbered apart (no server answers one from a
    prefix cache filled by another)."""

    def __init__(self, model: Served, shape: Shape) -> None:
        self.model = model
        self.shape = shape
        self.serial = itertools.count()
        self.marker = secrets.token_hex(3)

    def prompt(self, index: int) -> str:
        return numbered(self.marker, index, self.shape.text)

    async def send(self, client: httpx.AsyncClient, _: int = 0) -> StreamReply:
        s = self.shape
        body = generation_body(
            s.endpoint,
            self.prompt(next(self.serial)),
            max_tokens=s.max_tokens,
            ignore_eos=s.ignore_eos,
        )
        return await astream(client, self.model.endpoint, s.path, body)


async def run_point(
    requester: Requester, client: httpx.AsyncClient, point: LoadPoint
) -> LoopRun[StreamReply]:
    s = requester.shape

    async def send(index: int) -> StreamReply:
        return await requester.send(client, index)

    if point.kind is LoopKind.CLOSED:
        return await closed_loop(
            send, int(point.value), s.requests_per_point, s.max_seconds_per_point
        )
    offsets = arrival_offsets(point.value, s.requests_per_point, s.seed, s.burstiness)
    return await open_loop(send, offsets, s.max_seconds_per_point)


def measured(
    point: LoadPoint,
    order: int,
    run: LoopRun[StreamReply],
    counter: Callable[[str], int] | None,
    slo: Slo,
    resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> Measured:
    samples: list[RequestSample] = [request_sample(sent, counter) for sent in run.finished]
    stats = point_stats(samples, run.cut, run.duration_s, slo)
    boot = point_bootstrap(samples, slo, resamples, confidence, rng)
    why = oversaturated(samples, run.cut, point.kind is LoopKind.OPEN)
    record = point_record(point, run, stats, samples)
    record.update(
        {
            "order": order,
            "met_share": round(boot.met_share, 4) if boot.met else None,
            "p90_interval_s": {
                kind: None if iv is None else [round(iv.low, 6), round(iv.high, 6)]
                for kind, iv in boot.p90.items()
            },
            "oversaturated": why,
            "good": stats.slo_verdict is SloVerdict.MET and why is None,
        }
    )
    return Measured(point, order, stats, boot, why, record)
