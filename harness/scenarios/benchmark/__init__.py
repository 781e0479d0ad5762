"""``benchmark``: timings of a pytest-benchmark test, recorded as a case of the run.

Users benchmark their own code around a model (a request handler, a custom sampler) with
pytest-benchmark's ``benchmark`` fixture; :mod:`harness.pytest_plugin.benchmark_bridge` turns each
test's rounds into a case of this scenario, so the run record, ``compare`` and the report treat
them like any other case. The samples are pytest-benchmark's per-round figures (seconds per
call: a round's time divided by its iterations), warm-up rounds left out as pytest-benchmark
leaves them out. Nothing runs from a suite: a suite naming ``benchmark`` gets a skip saying so.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.scenarios.base import BaseScenario, Params, ScenarioContext, ScenarioOutput

TIME = MetricSpec(
    "benchmark.time_s",
    Unit.SECONDS,
    False,
    "seconds per call of the benchmarked code, one sample per pytest-benchmark round",
    noise_floor=0.03,
)
NOT_FROM_A_SUITE = (
    "benchmark cases come from pytest tests using pytest-benchmark's `benchmark` fixture "
    "(see examples/pytest_benchmark/), not from a suite"
)


class BenchmarkParams(Params):
    test: str = Field("", description="the test's name (with its parametrization id)")
    param: str | None = Field(None, description="pytest's parametrization id of the test")
    group: str | None = Field(None, description="pytest-benchmark's group of the test")


class BenchmarkScenario(BaseScenario[BenchmarkParams]):
    name: ClassVar[str] = "benchmark"
    version: ClassVar[int] = 1
    params_model = BenchmarkParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (TIME,)

    def run(self, ctx: ScenarioContext, params: BenchmarkParams) -> ScenarioOutput:
        return ScenarioOutput((), skip_reason=NOT_FROM_A_SUITE)


SCENARIO = BenchmarkScenario()
