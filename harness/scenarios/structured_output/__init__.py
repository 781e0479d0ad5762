"""``structured_output``: answers under a JSON Schema, judged, and what the constraint costs.

Each schema (:mod:`harness.scenarios.structured_output.cases`: four built in, or ``schemas``) is
asked twice per run, side by side, the order alternating: with the constraint and without it,
greedy, at most ``max_tokens`` tokens, its prompt as one user turn.

- In process (:class:`ConstrainedDecoding`, mlx-lm through llguidance): the backend masks each
  token to those the schema still allows. Constrained output must be JSON that conforms (or be
  cut by ``max_tokens``: ``truncated``); anything else fails the case (a broken constraint).
- Over HTTP (:class:`Served`, any server): ``response_format: {type: json_schema,
  json_schema: {name, schema, strict: true}}`` on ``/v1/chat/completions``, streamed. What the
  server did with it (:class:`~harness.scenarios.structured_output.verdicts.Honour`) is judged per
  request: ``rejected`` (a 4xx, its message kept), ``ignored`` (non-conforming output, or the
  unconstrained answer word for word while it does not conform), else ``honoured``. ``require``
  says what fails the case: ``honoured`` (the default: an ignored or rejected parameter fails,
  naming the engine and an escaped excerpt of the answer), ``not_ignored`` (a server that
  rejects every request is a ``capability_missing`` skip with its message; ignoring still
  fails) or ``nothing`` (a survey: verdicts recorded, none fails the case).

Each constrained answer's verdict (:class:`~harness.scenarios.structured_output.verdicts.Verdict`):
correct, conforms, nonconforming, truncated or not_json; conformance by ``jsonschema`` (every
built-in schema requires its fields, so ``{}`` never conforms), correctness field by field
against the schema's reference. Rates are per run over the schemas (rejected ones left out),
speed per request.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field, field_validator

from harness.backends.base import BackendCapability, BackendError, ConstrainedDecoding, Served
from harness.backends.openai_client import sync_client
from harness.core.metrics import MetricSpec
from harness.probe.types import ReasonCode
from harness.scenarios.artifacts import ScenarioArtifacts
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
)
from harness.scenarios.structured_output.cases import BUILTIN, SchemaCase
from harness.scenarios.structured_output.http import served_answer
from harness.scenarios.structured_output.local import constrained_answer, unconstrained_answer
from harness.scenarios.structured_output.metrics import (
    METRICS,
    PREFIX,
    metrics_of,
)
from harness.scenarios.structured_output.pairs import Answer, Pair, pair
from harness.scenarios.structured_output.policy import Require, failures_and_skip
from harness.scenarios.structured_output.verdicts import Honour, Verdict

if TYPE_CHECKING:
    import httpx

PROMPT_TOKENS = 96  # a chat-templated prompt of the built-in size, for the memory estimate


class StructuredOutputParams(Params):
    schemas: list[SchemaCase] = Field(
        default_factory=lambda: list(BUILTIN),
        min_length=1,
        description="requests: {name, prompt, json_schema, reference (field values, optional)}; "
        "unset: four built-in ones",
    )
    max_tokens: int = Field(64, ge=4, le=4096, description="tokens per answer at most")
    require: Require = Field(
        Require.HONOURED,
        description="over HTTP, what fails the case: honoured (ignored or rejected "
        "response_format), not_ignored (ignored; all rejected: a skip), nothing",
    )

    @field_validator("schemas")
    @classmethod
    def _names_differ(cls, schemas: list[SchemaCase]) -> list[SchemaCase]:
        seen = Counter(s.name for s in schemas)
        twice = sorted(n for n, count in seen.items() if count > 1)
        if twice:
            raise ValueError(f"schema names must differ: {', '.join(twice)} given twice")
        return schemas


@dataclass(frozen=True)
class Requester:
    """How the case asks: each schema's constrained and unconstrained request, and who
    answers (``engine``: the server, or the library in process)."""

    engine: str
    served: bool
    constrained: Callable[[int], Answer]  # the schema's index -> its answer
    unconstrained: Callable[[int], Answer]


class StructuredOutput(BaseScenario[StructuredOutputParams]):
    name: ClassVar[str] = PREFIX
    version: ClassVar[int] = 1
    params_model = StructuredOutputParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = METRICS
    # in process (constrained decoding) or served (HTTP): either will do, checked when it runs

    def workload(self, params: StructuredOutputParams) -> Workload:
        return Workload(PROMPT_TOKENS, params.max_tokens)

    def run(self, ctx: ScenarioContext, params: StructuredOutputParams) -> ScenarioOutput:
        model = ctx.model
        if isinstance(model, Served):
            with sync_client(300.0) as client:
                return self._judged(ctx, params, _served(model, params, client, ctx.case_end))
        if not isinstance(model, ConstrainedDecoding):
            return lacks(ctx, BackendCapability.CONSTRAINED_DECODING)
        try:
            library = model.constraint_library()
        except BackendError as exc:  # the library is not installed
            return ScenarioOutput((), skip_reason=f"{ReasonCode.CAPABILITY_MISSING.value}: {exc}")
        try:
            prompts = [
                model.chat_tokens([{"role": "user", "content": s.prompt}]) for s in params.schemas
            ]
        except BackendError as exc:  # no chat template: a base model
            return ScenarioOutput((), skip_reason=f"{ReasonCode.CAPABILITY_MISMATCH.value}: {exc}")
        return self._judged(ctx, params, _in_process(model, library, params, prompts))

    def _judged(
        self, ctx: ScenarioContext, params: StructuredOutputParams, requester: Requester
    ) -> ScenarioOutput:
        runs: list[list[Pair]] = []
        timed_out = None
        try:
            for run in self._runs(ctx, params, requester):
                runs.append(run)
        except _OutOfTime as exc:
            timed_out = str(exc)
        except _RequestFailed as exc:
            return ScenarioOutput((), {"engine": requester.engine}, failures=(str(exc),))
        measured = runs[ctx.warmup :] or runs[-1:]
        artifacts = _facts(requester, params, measured)
        metrics = metrics_of(measured if runs[ctx.warmup :] else [], runs[: ctx.warmup])
        failures, skip = failures_and_skip(
            requester.engine, requester.served, params.require, [p for r in runs for p in r]
        )
        return ScenarioOutput(
            metrics,
            artifacts,
            failures=failures,
            skip_reason=None if failures else skip,
            timed_out=timed_out,
        )

    @staticmethod
    def _runs(
        ctx: ScenarioContext, params: StructuredOutputParams, requester: Requester
    ) -> Iterator[list[Pair]]:
        total = ctx.warmup + ctx.repeats
        for index in range(total):
            pairs: list[Pair] = []
            for at, case in enumerate(params.schemas):
                left = ctx.time_left_s()
                if left is not None and left <= 0:
                    raise _OutOfTime(f"ran out after {index} of {total} runs (warm-ups included)")
                done = pair(
                    case,
                    partial(requester.constrained, at),
                    partial(requester.unconstrained, at),
                    constrained_first=(index + at) % 2 == 0,
                    served=requester.served,
                )
                broken = next(
                    (a for a in (done.constrained, done.unconstrained) if _broken(a)), None
                )
                if broken is not None and broken.out_of_time:
                    raise _OutOfTime(f"ran out after {index} of {total} runs: {broken.failure}")
                if broken is not None:
                    raise _RequestFailed(f"request failed ({case.name}): {broken.failure}")
                pairs.append(done)
            ctx.run_done(sum(p.constrained.tokens + p.unconstrained.tokens for p in pairs))
            yield pairs
            if all(p.honour is Honour.REJECTED for p in pairs):
                return  # nothing more to learn from a server that refuses the parameter


class _OutOfTime(Exception):
    pass


class _RequestFailed(Exception):
    pass


def _broken(answer: Answer) -> bool:
    """A request that failed for another reason than refusing the parameter (a 5xx, a cut
    connection, a timeout)."""
    return answer.failure is not None and not answer.rejected


def _served(
    model: Served, params: StructuredOutputParams, client: httpx.Client, case_end: float | None
) -> Requester:
    def ask(at: int, constrained: bool) -> Answer:
        case = params.schemas[at]
        return served_answer(
            client, model, case, params.max_tokens, constrained=constrained, case_end=case_end
        )

    return Requester(model.engine, True, lambda at: ask(at, True), lambda at: ask(at, False))


def _in_process(
    model: ConstrainedDecoding,
    library: str,
    params: StructuredOutputParams,
    prompts: Sequence[Sequence[int]],
) -> Requester:
    def constrained(at: int) -> Answer:
        schema = params.schemas[at].json_schema
        return constrained_answer(model, prompts[at], schema, params.max_tokens)

    def unconstrained(at: int) -> Answer:
        return unconstrained_answer(model, prompts[at], params.max_tokens)

    return Requester(f"in process ({library})", False, constrained, unconstrained)


def _facts(
    requester: Requester, params: StructuredOutputParams, measured: Sequence[Sequence[Pair]]
) -> dict[str, object]:
    pairs = [p for run in measured for p in run]
    verdicts = Counter(p.judged.verdict.value for p in pairs if p.judged)
    honours = Counter(p.honour.value for p in pairs if p.honour)
    return {
        "engine": requester.engine,
        "require": params.require.value,
        "max_tokens": params.max_tokens,
        "schemas": [s.name for s in params.schemas],
        "requests": len(pairs),
        "verdicts": {v.value: verdicts.get(v.value, 0) for v in Verdict},
        "honour": {h.value: honours.get(h.value, 0) for h in Honour} if requester.served else {},
        "answers": [p.record() for p in measured[0]] if measured else [],
    }


@dataclass(frozen=True)
class StructuredOutputArtifacts(ScenarioArtifacts):
    """What a ``structured_output`` case records beside its metrics that the report reads."""

    engine: str | None = None
    requests: int | None = None  # constrained requests in the measured runs
    verdicts: dict[str, int] | None = None  # answers per Verdict value
    honour: dict[str, int] | None = None  # served: requests per Honour value (in process: {})


SCENARIO = StructuredOutput()
