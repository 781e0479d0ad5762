"""The scenario contract: a params model, a version, metric specs, and ``run``.

Two optional parts feed the probe-and-policy step before a model loads (read with ``getattr``,
so a plug-in without them still runs): ``needs``, the capabilities a model must have
(``frozenset[Capability]``; none when absent), and ``workload(params) -> Workload | None``, the
tokens one request of the case holds at its largest, which sizes the memory estimate (the
policy's default context when absent or None). A scenario that only knows its total context may
define ``context_tokens(params) -> int | None`` instead (taken as all prompt: the larger figure).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict

from harness.backends.base import LoadedModel, LoadInfo
from harness.metrics import MetricSpec
from harness.probe.types import Capability
from harness.types import Metric

NO_NEEDS: frozenset[Capability] = frozenset()


class Params(BaseModel):
    """Base of every scenario's parameters: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Workload:
    """Tokens one request holds at its largest: prefilled prompt, then generated one by one."""

    prompt_tokens: int
    generated_tokens: int = 0

    @property
    def context_tokens(self) -> int:
        return self.prompt_tokens + self.generated_tokens


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
