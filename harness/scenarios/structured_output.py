"""``structured_output``: answers under a JSON Schema, judged, and what the constraint costs.

Each schema (:mod:`harness.scenarios.structured_cases`: four built in, or ``schemas``) is asked
twice per run, side by side, the order alternating: with the constraint and without it, greedy,
at most ``max_tokens`` tokens, its prompt as one user turn.

- In process (:class:`ConstrainedDecoding`, mlx-lm through llguidance): the backend masks each
  token to those the schema still allows. Constrained output must be JSON that conforms (or be
  cut by ``max_tokens``: ``truncated``); anything else fails the case (a broken constraint).
- Over HTTP (:class:`Served`, any server): ``response_format: {type: json_schema,
  json_schema: {name, schema, strict: true}}`` on ``/v1/chat/completions``, streamed. What the
  server did with it (:class:`~harness.scenarios.structured_verdicts.Honour`) is judged per
  request: ``rejected`` (a 4xx, its message kept), ``ignored`` (non-conforming output, or the
  unconstrained answer word for word while it does not conform), else ``honoured``. ``require``
  says what fails the case: ``honoured`` (the default: an ignored or rejected parameter fails,
  naming the engine and an escaped excerpt of the answer), ``not_ignored`` (a server that
  rejects every request is a ``capability_missing`` skip with its message; ignoring still
  fails) or ``nothing`` (a survey: verdicts recorded, none fails the case).

Each constrained answer's verdict (:class:`~harness.scenarios.structured_verdicts.Verdict`):
correct, conforms, nonconforming, truncated or not_json; conformance by ``jsonschema`` (every
built-in schema requires its fields, so ``{}`` never conforms), correctness field by field
against the schema's reference. Rates are per run over the schemas (rejected ones left out),
speed per request.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field, field_validator

from harness.backends.base import BackendCapability, BackendError, ConstrainedDecoding, Served
from harness.backends.openai_client import sync_client
from harness.core.metrics import MetricSpec
from harness.core.types import Metric, Unit
from harness.probe.types import ReasonCode
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
    metric,
)
from harness.scenarios.structured_cases import BUILTIN, SchemaCase
from harness.scenarios.structured_http import served_answer
from harness.scenarios.structured_local import constrained_answer, unconstrained_answer
from harness.scenarios.structured_pairs import Answer, Pair, pair
from harness.scenarios.structured_verdicts import Honour, Verdict

if TYPE_CHECKING:
    import httpx

PREFIX = "structured_output"
PARSE_RATE = MetricSpec(
    f"{PREFIX}.parse_rate", Unit.RATIO, True, "constrained answers that are JSON, per run"
)
CONFORM_RATE = MetricSpec(
    f"{PREFIX}.conform_rate",
    Unit.RATIO,
    True,
    "constrained answers that conform to their schema, per run",
)
CORRECT_RATE = MetricSpec(
    f"{PREFIX}.correct_rate",
    Unit.RATIO,
    True,
    "constrained answers whose fields equal the reference, per run (schemas with one)",
)
DECODE = MetricSpec(
    f"{PREFIX}.decode_tps", Unit.TOKENS_PER_SECOND, True, "decode tokens/s with the constraint"
)
FREE_DECODE = MetricSpec(
    f"{PREFIX}.unconstrained_decode_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "decode tokens/s of the same prompt without the constraint, same run",
)
COST = MetricSpec(
    f"{PREFIX}.cost_x",
    Unit.RATIO,
    False,
    "unconstrained decode tokens/s / constrained (1: the constraint costs nothing)",
)
TTFT = MetricSpec(
    f"{PREFIX}.ttft_s",
    Unit.SECONDS,
    False,
    "time to first token with the constraint (compiling it included)",
    noise_floor=0.05,
)
FREE_TTFT = MetricSpec(
    f"{PREFIX}.unconstrained_ttft_s",
    Unit.SECONDS,
    False,
    "time to first token without the constraint",
    noise_floor=0.05,
)
PROMPT_TOKENS = 96  # a chat-templated prompt of the built-in size, for the memory estimate


class Require(str, Enum):
    """What a server must do with ``response_format`` for the case to pass."""

    HONOURED = "honoured"  # ignoring or rejecting it fails the case
    NOT_IGNORED = "not_ignored"  # rejecting every request skips the case; ignoring fails it
    NOTHING = "nothing"  # verdicts recorded; none fails the case


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
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        PARSE_RATE,
        CONFORM_RATE,
        CORRECT_RATE,
        DECODE,
        FREE_DECODE,
        COST,
        TTFT,
        FREE_TTFT,
    )
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
        metrics = _metrics(measured if runs[ctx.warmup :] else [], runs[: ctx.warmup])
        failures, skip = _policy(requester, params.require, [p for r in runs for p in r])
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


def _rates(pairs: Sequence[Pair]) -> dict[MetricSpec, float]:
    """The run's shares over its judged answers (a rejected request has none)."""
    judged = [(p.case, p.judged) for p in pairs if p.judged is not None]
    if not judged:
        return {}
    rates = {
        PARSE_RATE: sum(j.verdict.parsed for _, j in judged) / len(judged),
        CONFORM_RATE: sum(j.verdict.conforms for _, j in judged) / len(judged),
    }
    checked = [j for case, j in judged if case.reference is not None]
    if checked:
        rates[CORRECT_RATE] = sum(j.correct is True for j in checked) / len(checked)
    return rates


def _speeds(p: Pair) -> dict[MetricSpec, float]:
    return {
        DECODE: p.constrained.decode_tps,
        FREE_DECODE: p.unconstrained.decode_tps,
        COST: p.cost_x,
        TTFT: p.constrained.ttft_s,
        FREE_TTFT: p.unconstrained.ttft_s,
    }


def _samples(runs: Sequence[Sequence[Pair]]) -> dict[MetricSpec, list[float]]:
    samples: dict[MetricSpec, list[float]] = {}
    for run in runs:
        for spec, value in _rates(run).items():
            samples.setdefault(spec, []).append(value)
        for p in run:
            for spec, value in _speeds(p).items():
                if math.isfinite(value):
                    samples.setdefault(spec, []).append(value)
    return samples


def _metrics(
    measured: Sequence[Sequence[Pair]], warm: Sequence[Sequence[Pair]]
) -> tuple[Metric, ...]:
    got, warmed = _samples(measured), _samples(warm)
    return tuple(
        metric(spec, got[spec], warmed.get(spec))
        for spec in StructuredOutput.metrics
        if got.get(spec)
    )


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


def _policy(
    requester: Requester, require: Require, pairs: Sequence[Pair]
) -> tuple[tuple[str, ...], str | None]:
    """(failures, skip reason) of the case's pairs, warm-ups included."""
    if not requester.served:
        broken = [p for p in pairs if p.judged and p.judged.verdict in _BROKEN]
        if not broken:
            return (), None
        first = broken[0]
        assert first.judged is not None
        return (
            f"{requester.engine}: constrained decoding gave {first.judged.verdict.value} "
            f"output in {len(broken)} of {len(pairs)} requests; first {first.case.name}: "
            f"{first.judged.why}: {first.excerpt()}",
        ), None
    if require is Require.NOTHING:
        return (), None
    failures: list[str] = []
    ignored = [p for p in pairs if p.honour is Honour.IGNORED]
    rejected = [p for p in pairs if p.honour is Honour.REJECTED]
    if ignored:
        first = ignored[0]
        why = first.judged.why if first.judged else ""
        failures.append(
            f"{requester.engine} ignored response_format (json_schema) in {len(ignored)} of "
            f"{len(pairs)} requests; first {first.case.name}: {why}: {first.excerpt()}"
        )
    message = rejected[0].constrained.failure if rejected else None
    if rejected and require is Require.HONOURED:
        failures.append(
            f"{requester.engine} rejected response_format (json_schema) in {len(rejected)} of "
            f"{len(pairs)} requests: {message}"
        )
    skip = None
    if rejected and len(rejected) == len(pairs):
        skip = (
            f"{ReasonCode.CAPABILITY_MISSING.value}: {requester.engine} rejects "
            f"response_format (json_schema): {message}"
        )
    return tuple(failures), skip


_BROKEN = (Verdict.NONCONFORMING, Verdict.NOT_JSON)

SCENARIO = StructuredOutput()
