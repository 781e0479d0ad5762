"""The scenario contract: a params model, a version, metric specs, and ``run``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict

from harness.backends.base import LoadedModel, LoadInfo
from harness.metrics import MetricSpec
from harness.types import Metric


class Params(BaseModel):
    """Base of every scenario's parameters: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class ScenarioContext:
    model: LoadedModel
    load_info: LoadInfo
    repeats: int
    warmup: int
    reload: Callable[[], tuple[LoadedModel, LoadInfo]]


@dataclass(frozen=True)
class ScenarioOutput:
    """What a scenario measured. ``failures`` (checks that did not hold) fail the case;
    ``skip_reason`` says the case cannot apply (e.g. "not reusable: ...")."""

    metrics: tuple[Metric, ...]
    artifacts: Mapping[str, Any] = field(default_factory=dict)
    failures: tuple[str, ...] = ()
    skip_reason: str | None = None


class Scenario(Protocol):
    name: ClassVar[str]
    version: ClassVar[int]
    params_model: ClassVar[type[Params]]
    metrics: ClassVar[tuple[MetricSpec, ...]]

    def run(self, ctx: ScenarioContext, params: Params) -> ScenarioOutput: ...


def metric(spec: MetricSpec, samples: list[float], warmup: list[float] | None = None) -> Metric:
    """A :class:`Metric` carrying ``spec``'s name and unit."""
    return Metric(spec.name, spec.unit, tuple(samples), tuple(warmup or ()))
