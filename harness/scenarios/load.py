"""``load``: how long the model takes to load, its weight bytes, and MLX memory after load."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from harness.metrics import MetricSpec
from harness.scenarios.base import Params, ScenarioContext, ScenarioOutput, metric
from harness.types import Metric, Unit

LOAD_S = MetricSpec("load.load_s", Unit.SECONDS, False, "wall time of backend load")
WEIGHTS = MetricSpec("load.weights_bytes", Unit.BYTES, False, "weight files on disk")
ACTIVE = MetricSpec(
    "load.mlx_active_bytes", Unit.BYTES, False, "MLX active memory right after load"
)


class LoadParams(Params):
    reloads: int = Field(0, ge=0, description="extra loads after the worker's first, as samples")


class LoadScenario:
    name: ClassVar[str] = "load"
    version: ClassVar[int] = 1
    params_model: ClassVar[type[Params]] = LoadParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (LOAD_S, WEIGHTS, ACTIVE)

    def run(self, ctx: ScenarioContext, params: Params) -> ScenarioOutput:
        assert isinstance(params, LoadParams)
        times = [ctx.load_info.load_s]
        actives: list[float] = []
        first_active = ctx.load_info.details.get("mlx_active_bytes")
        if first_active is not None:
            actives.append(float(first_active))
        for _ in range(params.reloads):
            _model, info = ctx.reload()
            times.append(info.load_s)
            active = info.details.get("mlx_active_bytes")
            if active is not None:
                actives.append(float(active))
        metrics: list[Metric] = [
            metric(LOAD_S, times),
            metric(WEIGHTS, [float(ctx.load_info.weights_bytes)]),
        ]
        if actives:
            metrics.append(metric(ACTIVE, actives))
        return ScenarioOutput(tuple(metrics), {"device": ctx.load_info.device})


SCENARIO = LoadScenario()
