"""``speculative``: speculative decoding with a draft model, judged by what it must not change.

A draft model over the model's own tokenizer (``draft``: an embedded name or a directory,
loaded once per case beside the model, through the same backend) proposes
``num_draft_tokens`` tokens at a time; the model verifies them in one pass. At temperature 0
the output must be exactly what the model alone gives, so speed is only half the measure:

- each run generates ``gen_tokens`` tokens greedily (EOS ignored) for the same prompt twice,
  side by side: without the draft (the baseline) and with it, the order alternating from run
  to run so neither always goes first;
- the two outputs must be identical token for token: a mismatch fails the case, naming the
  first differing position and both tokens (the first mismatch is kept in the artifacts);
- acceptance = draft tokens the model accepted / draft tokens proposed, per request, rebuilt
  from each token's ``from_draft`` flag (:mod:`harness.scenarios.draft_checks`);
- speed-up = the baseline's end-to-end time / the drafted request's, per run (both make the
  same tokens for the same prompt; the draft's own prefill is part of its cost);
- decode tok/s and time to first token of each, with throughput's definitions:
  (generated - 1) / (last token - first token), and the call to the first token.

The prompt is ``prompt_tokens`` tokens of plain text, or with ``prompts`` the user turns
through the chat template, one per run in turn (a real model drafts its chat answers best).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from pydantic import Field

from harness.backends.base import BackendCapability, BackendError, DraftDecoding, LoadedModel
from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.probe.types import Capability, ReasonCode
from harness.scenarios.base import (
    BaseScenario,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
    metric,
)
from harness.scenarios.draft_checks import (
    Acceptance,
    Mismatch,
    acceptance,
    first_mismatch,
    shown_token,
)
from harness.scenarios.prompts import PromptSource, text_prompt
from harness.scenarios.second_model import SecondModel, SecondModelError, second_model_path
from harness.scenarios.token_timing import Stamped, stamped

DECODE = MetricSpec(
    "speculative.decode_tps", Unit.TOKENS_PER_SECOND, True, "decode tokens/s with the draft"
)
BASELINE_DECODE = MetricSpec(
    "speculative.baseline_decode_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "decode tokens/s of the same model without the draft, same run",
)
SPEEDUP = MetricSpec(
    "speculative.speedup",
    Unit.RATIO,
    True,
    "end-to-end time without the draft / with it, same prompt and tokens, per run",
)
ACCEPTANCE = MetricSpec(
    "speculative.acceptance",
    Unit.RATIO,
    True,
    "draft tokens the model accepted / draft tokens proposed, per request",
    noise_floor=0.01,
)
TTFT = MetricSpec(
    "speculative.ttft_s",
    Unit.SECONDS,
    False,
    "time to first token with the draft",
    noise_floor=0.05,
)
BASELINE_TTFT = MetricSpec(
    "speculative.baseline_ttft_s",
    Unit.SECONDS,
    False,
    "time to first token without the draft",
    noise_floor=0.05,
)


class SpeculativeParams(PromptSource):
    draft: SecondModel = Field(
        description="the draft model, same tokenizer: `embedded: NAME` or `path: DIR`"
    )
    num_draft_tokens: int = Field(3, ge=1, le=64, description="tokens the draft proposes a round")
    gen_tokens: int = Field(32, ge=2, description="tokens to generate (EOS ignored)")


@dataclass(frozen=True)
class Timed(Stamped):
    """One request: its tokens, the time (s) each was ready since the call, and which the
    draft proposed (empty without a draft)."""

    from_draft: tuple[bool, ...] = ()


def baseline_request(model: LoadedModel, prompt: list[int], gen_tokens: int) -> Timed:
    run = stamped(model.stream_tokens(prompt, max_tokens=gen_tokens, ignore_eos=True))
    return Timed(run.tokens, run.stamps)


def drafted_request(
    model: DraftDecoding, draft: object, prompt: list[int], params: SpeculativeParams
) -> Timed:
    flags: list[bool] = []
    steps = model.stream_drafted(
        prompt, draft, max_tokens=params.gen_tokens, num_draft_tokens=params.num_draft_tokens
    )

    def tokens() -> Iterator[int]:
        for step in steps:
            flags.append(step.from_draft)
            yield step.token

    run = stamped(tokens())
    return Timed(run.tokens, run.stamps, tuple(flags))


@dataclass(frozen=True)
class SideBySide:
    """One run: the same prompt without and with the draft."""

    baseline: Timed
    drafted: Timed
    acceptance: Acceptance
    mismatch: Mismatch | None

    @property
    def speedup(self) -> float:
        if not self.drafted.e2e_s > 0:
            return float("nan")
        return self.baseline.e2e_s / self.drafted.e2e_s

    def figures(self) -> dict[str, float]:
        return {
            DECODE.name: self.drafted.decode_tps,
            BASELINE_DECODE.name: self.baseline.decode_tps,
            SPEEDUP.name: self.speedup,
            ACCEPTANCE.name: self.acceptance.rate,
            TTFT.name: self.drafted.ttft_s,
            BASELINE_TTFT.name: self.baseline.ttft_s,
        }


def side_by_side(
    model: DraftDecoding,
    draft: object,
    prompt: list[int],
    params: SpeculativeParams,
    baseline_first: bool,
) -> SideBySide:
    if baseline_first:
        baseline = baseline_request(model, prompt, params.gen_tokens)
        drafted = drafted_request(model, draft, prompt, params)
    else:
        drafted = drafted_request(model, draft, prompt, params)
        baseline = baseline_request(model, prompt, params.gen_tokens)
    return SideBySide(
        baseline,
        drafted,
        acceptance(drafted.from_draft, params.num_draft_tokens, params.gen_tokens),
        first_mismatch(baseline.tokens, drafted.tokens),
    )


def mismatch_failure(model: LoadedModel, runs: list[SideBySide]) -> str | None:
    """One line for the runs whose greedy output the draft changed (None: none did)."""
    broken = [(index, run.mismatch) for index, run in enumerate(runs) if run.mismatch]
    if not broken:
        return None
    index, found = broken[0]
    assert found is not None
    return (
        f"greedy output changed by the draft in {len(broken)} of {len(runs)} runs; first at "
        f"token {found.position} (run {index + 1}): without the draft "
        f"{shown_token(model, found.without_draft)}, with it {shown_token(model, found.with_draft)}"
    )


def prompt_blind(
    model: LoadedModel, prompt: list[int], run: SideBySide, params: SpeculativeParams
) -> str | None:
    """Why "the draft kept the greedy output" proves nothing here (one line), else None: the
    prompt with its first tokens replaced gets the same greedy tokens (issue 36's rule)."""
    from harness.scenarios.prompt_dependence import foreign_prompt, independence_line

    other = foreign_prompt(prompt, min(8, len(prompt)), model.vocab_size())
    if baseline_request(model, other, params.gen_tokens).tokens != run.baseline.tokens:
        return None
    return independence_line(
        f"the prompt with its first {min(8, len(prompt))} tokens replaced got the same "
        f"{len(run.baseline.tokens)} greedy tokens, so the drafted output matching the "
        "undrafted one proves nothing"
    )


def _prompts(model: LoadedModel, params: SpeculativeParams) -> list[list[int]]:
    if params.prompts is None:
        return [text_prompt(model, params.text_tokens)]
    return [model.chat_tokens([{"role": "user", "content": text}]) for text in params.prompts]


class SpeculativeScenario(BaseScenario[SpeculativeParams]):
    name: ClassVar[str] = "speculative"
    version: ClassVar[int] = 1
    params_model = SpeculativeParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        DECODE,
        BASELINE_DECODE,
        SPEEDUP,
        ACCEPTANCE,
        TTFT,
        BASELINE_TTFT,
    )
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.TEXT})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.TEXT_GENERATION, BackendCapability.DRAFT_DECODING}
    )

    def workload(self, params: SpeculativeParams) -> Workload:
        """One request's tokens; the draft (when it resolves) is loaded beside the model."""
        references: tuple[str, ...] = ()
        with contextlib.suppress(SecondModelError):  # else the case fails with the reason
            references = (str(second_model_path(params.draft, "draft")),)
        return Workload(params.text_tokens, params.gen_tokens, references)

    def run(self, ctx: ScenarioContext, params: SpeculativeParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, LoadedModel):
            return lacks(ctx, BackendCapability.TEXT_GENERATION)
        if not isinstance(model, DraftDecoding):
            return lacks(ctx, BackendCapability.DRAFT_DECODING)
        artifacts: dict[str, object] = {
            "draft": params.draft.label,
            "num_draft_tokens": params.num_draft_tokens,
        }
        try:
            prompts = _prompts(model, params)
        except BackendError as exc:  # no chat template: a base model
            reason = f"{exc}; leave out prompts for a plain-text prompt"
            return ScenarioOutput(
                (), skip_reason=f"{ReasonCode.CAPABILITY_MISMATCH.value}: {reason}"
            )
        try:
            draft = model.load_draft(second_model_path(params.draft, "draft"))
        except (SecondModelError, BackendError) as exc:
            return ScenarioOutput((), artifacts, failures=(str(exc),))
        runs = list(self._runs(ctx, model, draft, prompts, params))
        warm, measured = runs[: ctx.warmup], runs[ctx.warmup :]
        metrics = tuple(
            metric(
                spec,
                [run.figures()[spec.name] for run in measured],
                [run.figures()[spec.name] for run in warm],
            )
            for spec in self.metrics
        )
        artifacts.update(_facts(prompts, measured, runs))
        failure = mismatch_failure(model, runs)
        if failure is None and runs:
            failure = prompt_blind(model, prompts[0], runs[0], params)
        return ScenarioOutput(metrics, artifacts, failures=(failure,) if failure else ())

    def _runs(
        self,
        ctx: ScenarioContext,
        model: DraftDecoding,
        draft: object,
        prompts: list[list[int]],
        params: SpeculativeParams,
    ) -> Iterator[SideBySide]:
        for index in range(ctx.warmup + ctx.repeats):
            prompt = prompts[index % len(prompts)]
            run = side_by_side(model, draft, prompt, params, baseline_first=index % 2 == 0)
            ctx.run_done(len(run.baseline.tokens) + len(run.drafted.tokens))
            yield run


def _facts(
    prompts: list[list[int]], measured: list[SideBySide], runs: list[SideBySide]
) -> dict[str, object]:
    """Per measured run: acceptance and its counts; the first mismatch of any run (warm-ups
    counted first, as in the failure)."""
    mismatch = next(
        ({"run": i + 1, **vars(r.mismatch)} for i, r in enumerate(runs) if r.mismatch), None
    )
    return {
        "prompt_tokens": [len(p) for p in prompts],
        "accepted_tokens": [r.acceptance.accepted for r in measured],
        "drafted_tokens": [r.acceptance.drafted for r in measured],
        "acceptance": [r.acceptance.rate for r in measured],
        "generated_tokens": [len(r.drafted.tokens) for r in measured],
        "first_mismatch": mismatch,
    }


SCENARIO = SpeculativeScenario()
