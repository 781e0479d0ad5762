"""``load``: how long the model takes to load, its weight bytes, and MLX memory after load."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from harness.backends.base import BackendCapability
from harness.core.metrics import MetricSpec
from harness.core.types import Metric, Unit
from harness.probe.types import Capability
from harness.scenarios.base import (
    NO_BACKEND_NEEDS,
    NO_NEEDS,
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    metric,
)

LOAD_S = MetricSpec("load.load_s", Unit.SECONDS, False, "wall time of backend load")
WEIGHTS = MetricSpec("load.weights_bytes", Unit.BYTES, False, "weight files on disk")
LOAD_PEAK = MetricSpec("load.mlx_peak_bytes", Unit.BYTES, False, "MLX peak memory during the load")
ACTIVE = MetricSpec(
    "load.mlx_active_bytes", Unit.BYTES, False, "MLX active memory right after load"
)


class LoadParams(Params):
    reloads: int = Field(0, ge=0, description="extra loads after the worker's first, as samples")


class LoadScenario(BaseScenario[LoadParams]):
    name: ClassVar[str] = "load"
    version: ClassVar[int] = 1
    params_model = LoadParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (LOAD_S, WEIGHTS, ACTIVE, LOAD_PEAK)
    needs: ClassVar[frozenset[Capability]] = NO_NEEDS  # any model its backend can load
    backend_needs: ClassVar[frozenset[BackendCapability]] = NO_BACKEND_NEEDS  # any backend
    repeats_apply: ClassVar[bool] = False  # samples come from `reloads`, not from repeats
    samples_from: ClassVar[str] = "reloads"

    def run(self, ctx: ScenarioContext, params: LoadParams) -> ScenarioOutput:
        infos = [ctx.load_info] + [ctx.reload()[1] for _ in range(params.reloads)]
        metrics: list[Metric] = [
            metric(LOAD_S, [info.load_s for info in infos]),
            metric(WEIGHTS, [float(ctx.load_info.weights_bytes)]),
        ]
        for spec, key in ((ACTIVE, "mlx_active_bytes"), (LOAD_PEAK, "mlx_peak_bytes")):
            values = [float(info.details[key]) for info in infos if key in info.details]
            if values:
                metrics.append(metric(spec, values))
        return ScenarioOutput(tuple(metrics), {"device": ctx.load_info.device})


SCENARIO = LoadScenario()
