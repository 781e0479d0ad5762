"""The scenario contract: a params model, a version, metric specs, and ``run``.

A scenario is generic over its params type: ``Scenario[P]`` runs with ``P``, the pydantic model
``params_model`` validates a case's params into. Two kinds of requirement are kept apart:

- ``needs``: what the MODEL must be able to do (:class:`harness.probe.types.Capability`: text,
  chat, vision, ...), judged from the model's files by the probe-and-policy step
  (``capability_mismatch: scenario needs text; model has audio_in``);
- ``backend_needs``: what the BACKEND must implement
  (:class:`harness.backends.base.BackendCapability`: text generation, prompt cache, tool
  parsing, ...), judged from the backend's declared ``capabilities`` before its worker starts
  (``capability_missing: backend fake has no prompt cache``). Inside ``run`` the scenario
  narrows ``ctx.model`` with ``isinstance`` against the capability's protocol.

``measures_time`` (default True) says whether the case's figures depend on the machine's speed:
such a case refuses to share the machine with parallel pytest-xdist workers.

``workload(params) -> Workload | None`` gives the tokens one request of the case holds at its
largest, which sizes the memory estimate (the policy's default context when None).
:class:`BaseScenario` gives the defaults (no needs, no workload). A plug-in written before
these parts existed still runs: the preflight reads them from it with defaults, and one that
only knows its total context may define ``context_tokens(params) -> int | None`` instead.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict

from harness.backends.base import BackendCapability, LoadInfo, capability_missing_reason
from harness.core.check_types import CheckVerdict
from harness.core.metrics import MetricSpec
from harness.core.types import Metric
from harness.probe.types import Capability

NO_NEEDS: frozenset[Capability] = frozenset()
NO_BACKEND_NEEDS: frozenset[BackendCapability] = frozenset()


class Params(BaseModel):
    """Base of every scenario's parameters: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


P = TypeVar("P", bound=Params)


@dataclass(frozen=True)
class Workload:
    """Tokens one request holds at its largest: prefilled prompt, then generated one by one."""

    prompt_tokens: int
    generated_tokens: int = 0
    references: tuple[str, ...] = ()  # model folders the case loads beside its own, same tokens
    logits_rows: int = 1  # positions whose logits a forward pass keeps (all when scoring text)

    @property
    def context_tokens(self) -> int:
        return self.prompt_tokens + self.generated_tokens


@dataclass(frozen=True)
class ScenarioContext:
    """What a scenario runs with. ``model`` is what the backend loaded: it has the interface
    of each capability ``backend`` declared (checked at load), narrowed with ``isinstance``."""

    model: object
    load_info: LoadInfo
    repeats: int
    warmup: int
    reload: Callable[[], tuple[object, LoadInfo]]
    backend: str = "unknown"  # the backend's registered name, for reasons
    # after each run (warm-ups first), with the tokens it generated when known: the live
    # progress of the case (:mod:`harness.runner.repeat_progress`)
    run_done: Callable[[int | None], None] = field(default=lambda tokens=None: None)
    # when the scenario must have returned (a ``time.monotonic()`` value; None: no limit): the
    # case's time limit less the worker's margin to report. Requests are cut there, so what
    # was measured before it is kept (``ScenarioOutput.timed_out``) instead of lost to a kill.
    case_end: float | None = None

    def time_left_s(self) -> float | None:
        """Seconds until ``case_end`` (None: no limit)."""
        import time

        return None if self.case_end is None else self.case_end - time.monotonic()


@dataclass(frozen=True)
class ScenarioOutput:
    """What a scenario measured. ``failures`` (checks that did not hold) fail the case;
    ``skip_reason`` says the case cannot apply (e.g. "not reusable: ..."); ``timed_out`` says
    the case's time ran out before it ended, with what it kept (the case is ``timed_out``, its
    metrics and artifacts recorded); ``checks`` gives each named check's own verdict, recorded
    as ``CaseResult.checks`` so compare, the pin-set matrix and bisect judge each check."""

    metrics: tuple[Metric, ...]
    artifacts: Mapping[str, Any] = field(default_factory=dict)
    failures: tuple[str, ...] = ()
    skip_reason: str | None = None
    timed_out: str | None = None
    checks: tuple[CheckVerdict, ...] = ()


@runtime_checkable
class Scenario(Protocol[P]):
    """The whole contract of a scenario running with params of type ``P``."""

    name: ClassVar[str]
    version: ClassVar[int]
    metrics: ClassVar[tuple[MetricSpec, ...]]
    needs: ClassVar[frozenset[Capability]]  # of the model (probe)
    backend_needs: ClassVar[frozenset[BackendCapability]]  # of the backend (declared)
    repeats_apply: ClassVar[bool]  # False: its samples do not come from `repeats`
    samples_from: ClassVar[str]  # what gives more samples: "repeats", "reloads", "prompts", ...
    params_model: type[P]

    def workload(self, params: P) -> Workload | None: ...

    def run(self, ctx: ScenarioContext, params: P) -> ScenarioOutput: ...


class BaseScenario(ABC, Generic[P]):
    """A :class:`Scenario` with the defaults of its optional parts: it requires nothing of the
    model or the backend, takes its samples from ``repeats``, and declares no workload. A
    subclass sets ``name``, ``version``, ``params_model`` and ``metrics`` and defines
    ``run(ctx, params: P)`` (mypy checks both against ``P``)."""

    name: ClassVar[str]
    version: ClassVar[int]
    metrics: ClassVar[tuple[MetricSpec, ...]]
    needs: ClassVar[frozenset[Capability]] = NO_NEEDS
    backend_needs: ClassVar[frozenset[BackendCapability]] = NO_BACKEND_NEEDS
    repeats_apply: ClassVar[bool] = True
    # what gives a case more samples a side, for the hint of an inconclusive comparison:
    # "repeats" (the default), or the scenario's own parameter ("reloads") or items ("prompts")
    samples_from: ClassVar[str] = "repeats"
    # True: a metric depends on the machine's speed (times, rates), so parallel workers on one
    # machine would skew it: ``pytest -n 2`` refuses the case. False: correctness only.
    measures_time: ClassVar[bool] = True
    params_model: type[P]

    def workload(self, params: P) -> Workload | None:
        return None

    @abstractmethod
    def run(self, ctx: ScenarioContext, params: P) -> ScenarioOutput: ...


def lacks(ctx: ScenarioContext, capability: BackendCapability) -> ScenarioOutput:
    """The skip of a case whose model lacks ``capability`` (the preflight skips such a case
    before its worker starts; this covers a case it could not judge)."""
    return ScenarioOutput((), skip_reason=capability_missing_reason(ctx.backend, (capability,)))


def metric(spec: MetricSpec, samples: list[float], warmup: list[float] | None = None) -> Metric:
    """A :class:`Metric` carrying ``spec``'s name and unit."""
    return Metric(spec.name, spec.unit, tuple(samples), tuple(warmup or ()))
