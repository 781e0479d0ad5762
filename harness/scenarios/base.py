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

Every part of :class:`Scenario` is read as a plain attribute (``scenario.measures_time``), never
with a fallback: :class:`BaseScenario` declares the default of each optional part (no needs,
samples from ``repeats``, measures time, the default headline metrics, no workload), and the
registry refuses a plug-in that lacks a part (:func:`missing_parts`), naming what it lacks.
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
    as ``CaseResult.checks`` so compare, the pin-set comparison and bisect judge each check."""

    metrics: tuple[Metric, ...]
    artifacts: Mapping[str, Any] = field(default_factory=dict)
    failures: tuple[str, ...] = ()
    skip_reason: str | None = None
    timed_out: str | None = None
    checks: tuple[CheckVerdict, ...] = ()


@runtime_checkable
class Scenario(Protocol[P]):
    """The whole contract of a scenario running with params of type ``P``: the required parts
    (``name``, ``version``, ``metrics``, ``params_model``, ``run``) and the optional ones, whose
    defaults and meaning :class:`BaseScenario` declares."""

    name: ClassVar[str]
    version: ClassVar[int]
    metrics: ClassVar[tuple[MetricSpec, ...]]
    needs: ClassVar[frozenset[Capability]]  # of the model (probe)
    backend_needs: ClassVar[frozenset[BackendCapability]]  # of the backend (declared)
    repeats_apply: ClassVar[bool]  # False: its samples do not come from `repeats`
    samples_from: ClassVar[str]  # what gives more samples: "repeats", "reloads", "prompts", ...
    measures_time: ClassVar[bool]  # True: its figures depend on the machine's speed
    headline_metrics: ClassVar[tuple[str, ...]]  # what `repeats: auto` pins down; (): default
    params_model: type[P]

    def workload(self, params: P) -> Workload | None: ...

    def run(self, ctx: ScenarioContext, params: P) -> ScenarioOutput: ...


def scenario_parts() -> tuple[str, ...]:
    """Every part of the :class:`Scenario` contract, required and optional alike."""
    methods = {name for name, value in vars(Scenario).items() if callable(value)}
    return tuple(sorted({*Scenario.__annotations__, *(m for m in methods if m[0] != "_")}))


def missing_parts(plugin: object) -> tuple[str, ...]:
    """The parts of the :class:`Scenario` contract ``plugin`` lacks (subclassing
    :class:`BaseScenario` gives every optional one its default)."""
    return tuple(part for part in scenario_parts() if not hasattr(plugin, part))


class BaseScenario(ABC, Generic[P]):
    """A :class:`Scenario` with the defaults of its optional parts: it requires nothing of the
    model or the backend, takes its samples from ``repeats``, measures time, leaves the
    headline metrics to the default, and declares no workload. A subclass sets ``name``,
    ``version``, ``params_model`` and ``metrics`` and defines ``run(ctx, params: P)`` (mypy
    checks both against ``P``); it overrides an optional part by assigning it."""

    name: ClassVar[str]
    version: ClassVar[int]
    metrics: ClassVar[tuple[MetricSpec, ...]]
    needs: ClassVar[frozenset[Capability]] = NO_NEEDS
    """What the MODEL must be able to do, judged from its files before load (none)."""
    backend_needs: ClassVar[frozenset[BackendCapability]] = NO_BACKEND_NEEDS
    """What the BACKEND must implement, judged from its declared capabilities (none)."""
    repeats_apply: ClassVar[bool] = True
    """False: the samples do not come from ``repeats`` (``load``: from ``reloads``); such a
    case runs once, is not measured in rounds, and draws no ``repeats`` warning."""
    samples_from: ClassVar[str] = "repeats"
    """What gives a case more samples a side, for the hint of an inconclusive comparison:
    ``"repeats"``, or the scenario's own parameter (``"reloads"``) or items (``"prompts"``)."""
    measures_time: ClassVar[bool] = True
    """True: a metric depends on the machine's speed (times, rates), so parallel workers on one
    machine would skew it: ``pytest -n 2`` refuses the case. False: correctness only."""
    headline_metrics: ClassVar[tuple[str, ...]] = ()
    """The metrics whose medians ``repeats: auto`` pins down (and rounds order by); ``()``:
    the scenario's higher-is-better tokens/s metrics (:func:`harness.runner.repeat_loop.
    headline_names`)."""
    params_model: type[P]

    def workload(self, params: P) -> Workload | None:
        """The tokens one request of the case holds at its largest, which sizes the memory
        estimate; by default what :meth:`context_tokens` says, as all prompt (None: the
        policy's default context)."""
        tokens = self.context_tokens(params)
        return Workload(tokens) if tokens else None

    def context_tokens(self, params: P) -> int | None:
        """The total context of the case, for a scenario that knows no more than that (the
        older form of :meth:`workload`, which uses it); None: unknown."""
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
