"""``batch_generate``: batched generation in process, its speed by batch size and its answers.

mlx-lm's ``BatchGenerator`` (what ``batch_generate`` and ``mlx_lm.server`` batch with) decodes
``b`` requests as one batch: their prompts prefilled together (the shorter ones padded), then
one forward pass a step for all of them. For each batch size ``b`` in ``batch_sizes``, each run
sends the first ``b`` of the case's distinct prompts as one batch, ``gen_tokens`` tokens each,
greedy, EOS ignored. Request ``i`` (from 1) gets its own prompt, ``Request i:`` then plain text,
``prompt_tokens - 3 (i - 1)`` tokens long (at least 8), so the padded paths run. Per batch size
(``b4`` is batch size 4), with throughput's definitions over the whole batch:

- ``batch_generate.b4.prefill_tps``: the batch's prompt tokens / the time until the batch's
  first tokens are ready (all requests get their first token in the same step);
- ``batch_generate.b4.decode_tps``: the batch's tokens after each request's first / the time
  from the first step to the last (total tok/s, all requests);
- ``batch_generate.b4.decode_tps_per_request``: that over ``b`` (what one user sees);
- ``batch_generate.b4.e2e_s``: the call to the batch's last token.

Correctness: each prompt is first generated alone (``stream_tokens``, same ``gen_tokens``); in
every run every request's batched greedy tokens must equal its prompt's single-request tokens.
A mismatch fails the case with one line naming the request, the batch size and the first
differing token. When the distinct prompts all get the same answer alone, the model's answer
does not depend on its prompt and matching proves nothing (a batch that served one request's
tokens to another would still match): the case fails closed with the harness's one
"not judged" line (:mod:`harness.scenarios.prompt_dependence`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field, field_validator

from harness.backends.base import BackendCapability, BatchGenerating, LoadedModel
from harness.core.metrics import MetricSpec, PointFigure
from harness.core.types import Metric, Unit
from harness.probe.types import Capability
from harness.scenarios.artifacts import ScenarioArtifacts
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
)
from harness.scenarios.draft_checks import Mismatch, first_mismatch, shown_token
from harness.scenarios.prompt_dependence import independence_line
from harness.scenarios.prompts import text_prompt

PREFIX = "batch_generate"
LENGTH_STEP = 3  # each request's prompt this many tokens shorter than the one before
MIN_PROMPT = 8  # no request's prompt shorter: its "Request i:" start stays whole


class Figure(PointFigure):
    """One metric of a batch size, without the size: ``prefill_tps``."""

    def name(self, batch_size: int) -> str:
        return f"{PREFIX}.b{batch_size}.{self.suffix}"

    @property
    def pattern(self) -> MetricSpec:
        """The spec of every batch size's metric (``batch_generate.b*.prefill_tps``)."""
        return self.spec_named(f"{PREFIX}.b*.{self.suffix}", "b4: batch size 4")


PREFILL = Figure(
    "prefill_tps", Unit.TOKENS_PER_SECOND, True, "the batch's prompt tokens / time to first tokens"
)
DECODE = Figure(
    "decode_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "the batch's tokens after each request's first / first to last step (total tok/s)",
)
PER_REQUEST = Figure(
    "decode_tps_per_request",
    Unit.TOKENS_PER_SECOND,
    True,
    "decode tok/s of the batch / batch size (one user's tok/s)",
)
E2E = Figure("e2e_s", Unit.SECONDS, False, "end-to-end time of the batch", noise_floor=0.05)
FIGURES: tuple[Figure, ...] = (PREFILL, DECODE, PER_REQUEST, E2E)


class BatchGenerateParams(Params):
    batch_sizes: tuple[int, ...] = Field(
        (1, 2, 4, 8),
        min_length=1,
        description="requests decoded as one batch, one batch per size per run",
    )
    prompt_tokens: int = Field(
        64,
        ge=MIN_PROMPT,
        description="the first request's prompt length in tokens; each next one 3 shorter "
        "(at least 8)",
    )
    gen_tokens: int = Field(32, ge=2, description="tokens to generate per request (EOS ignored)")

    @field_validator("batch_sizes")
    @classmethod
    def _sizes(cls, sizes: tuple[int, ...]) -> tuple[int, ...]:
        if any(size < 1 for size in sizes):
            raise ValueError("every batch size is at least 1")
        return tuple(sorted(set(sizes)))


@dataclass(frozen=True)
class BatchRun:
    """One batch's tokens per request and when its first and last steps were ready (s since
    the call)."""

    tokens: tuple[tuple[int, ...], ...]
    first_s: float
    last_s: float

    @property
    def generated(self) -> int:
        return sum(len(t) for t in self.tokens)


@dataclass(frozen=True)
class Found:
    """A batched answer that differs from its prompt's answer alone."""

    run: int  # from 1, warm-ups counted
    batch_size: int
    request: int  # from 1
    mismatch: Mismatch

    def line(self, model: LoadedModel, count: int, total: int) -> str:
        m = self.mismatch
        return (
            f"batched greedy answer differs from the single-request answer in {count} of "
            f"{total} batched requests; first: request {self.request} at batch size "
            f"{self.batch_size} (run {self.run}), token {m.position}: alone "
            f"{shown_token(model, m.without_draft)}, batched {shown_token(model, m.with_draft)}"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "run": self.run,
            "batch_size": self.batch_size,
            "request": self.request,
            "position": self.mismatch.position,
            "alone": self.mismatch.without_draft,
            "batched": self.mismatch.with_draft,
        }


def request_prompt(model: LoadedModel, index: int, prompt_tokens: int) -> list[int]:
    """Request ``index``'s (from 0) prompt: ``Request i:`` then plain text, its own length."""
    length = max(MIN_PROMPT, prompt_tokens - LENGTH_STEP * index)
    return (model.encode(f"Request {index + 1}: ") + text_prompt(model, length))[:length]


def timed_batch(model: BatchGenerating, prompts: list[list[int]], gen_tokens: int) -> BatchRun:
    tokens: list[list[int]] = [[] for _ in prompts]
    start = time.perf_counter()
    first = last = math.nan
    for step in model.stream_batch(prompts, max_tokens=gen_tokens):
        now = time.perf_counter() - start
        first = now if math.isnan(first) else first
        last = now
        for index, token in step:
            tokens[index].append(token)
    return BatchRun(tuple(tuple(t) for t in tokens), first, last)


def figures(run: BatchRun, prompt_tokens: int) -> dict[Figure, float]:
    """The four figures of one batch (nan where the batch made too few steps)."""
    size = len(run.tokens)
    span = run.last_s - run.first_s
    decode = (run.generated - size) / span if span > 0 else math.nan
    return {
        PREFILL: prompt_tokens / run.first_s if run.first_s > 0 else math.nan,
        DECODE: decode,
        PER_REQUEST: decode / size,
        E2E: run.last_s,
    }


def prompt_blind(alone: list[list[int]], gen_tokens: int) -> str | None:
    """The "not judged" line when every distinct prompt got the same answer alone."""
    if len(alone) < 2 or any(answer != alone[0] for answer in alone[1:]):
        return None
    return independence_line(
        f"its {len(alone)} distinct prompts all got the same {gen_tokens} greedy tokens alone, "
        "so a batched answer matching its single-request answer proves nothing"
    )


class BatchGenerateScenario(BaseScenario[BatchGenerateParams]):
    name: ClassVar[str] = "batch_generate"
    version: ClassVar[int] = 1
    params_model = BatchGenerateParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = tuple(f.pattern for f in FIGURES)
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.TEXT})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.TEXT_GENERATION, BackendCapability.BATCH_GENERATION}
    )

    def workload(self, params: BatchGenerateParams) -> Workload:
        return Workload(params.prompt_tokens, params.gen_tokens)

    def run(self, ctx: ScenarioContext, params: BatchGenerateParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, BatchGenerating):
            return lacks(ctx, BackendCapability.BATCH_GENERATION)
        sizes = params.batch_sizes
        prompts = [request_prompt(model, i, params.prompt_tokens) for i in range(max(*sizes, 2))]
        alone = [
            list(model.stream_tokens(p, max_tokens=params.gen_tokens, ignore_eos=True))
            for p in prompts
        ]
        values: dict[tuple[int, Figure], tuple[list[float], list[float]]] = {}
        identical = {size: True for size in sizes}
        found: list[Found] = []
        checked = 0
        timed_out = None
        runs = ctx.warmup + ctx.repeats
        for run in range(runs):
            left = ctx.time_left_s()
            if left is not None and left <= 0:
                timed_out = f"the case's time ran out after {run} of {runs} runs"
                break
            made = 0
            for size in sizes:
                batch = timed_batch(model, prompts[:size], params.gen_tokens)
                made += batch.generated
                prompt_total = sum(len(p) for p in prompts[:size])
                for figure, value in figures(batch, prompt_total).items():
                    samples = values.setdefault((size, figure), ([], []))
                    samples[0 if run < ctx.warmup else 1].append(value)
                for request, tokens in enumerate(batch.tokens):
                    checked += 1
                    differs = first_mismatch(alone[request], list(tokens))
                    if differs is not None:
                        identical[size] = False
                        found.append(Found(run + 1, size, request + 1, differs))
            ctx.run_done(made)
        metrics = tuple(
            Metric(figure.name(size), figure.unit, tuple(measured), tuple(warm))
            for (size, figure), (warm, measured) in values.items()
        )
        blind = prompt_blind(alone, params.gen_tokens)
        failures: tuple[str, ...] = ()
        if found:
            failures = (found[0].line(model, len(found), checked),)
        elif blind is not None:
            failures = (blind,)
        artifacts = BatchGenerateArtifacts(
            batch_sizes=tuple(sizes),
            prompt_tokens=tuple(len(p) for p in prompts),
            gen_tokens=params.gen_tokens,
            identical={str(size): same for size, same in identical.items()},
            first_mismatch=found[0].to_json() if found else None,
            mismatches=len(found),
            requests_checked=checked,
            prompt_dependence="blind" if blind is not None else "depends",
        )
        return ScenarioOutput(metrics, artifacts.to_record(), failures, timed_out=timed_out)


@dataclass(frozen=True)
class BatchGenerateArtifacts(ScenarioArtifacts):
    """What a ``batch_generate`` case records beside its metrics."""

    batch_sizes: tuple[int, ...] = ()
    prompt_tokens: tuple[int, ...] = ()
    gen_tokens: int | None = None
    identical: dict[str, bool] | None = None  # batched output = alone, by batch size
    first_mismatch: dict[str, Any] | None = None
    mismatches: int | None = None
    requests_checked: int | None = None
    prompt_dependence: str | None = None  # "blind": the model ignores its prompt

    def same(self, size: int) -> bool | None:
        """Whether batch size ``size`` gave each request's output alone (None: not checked)."""
        return (self.identical or {}).get(str(size))


SCENARIO = BatchGenerateScenario()
