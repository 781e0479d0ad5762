"""``greedy_text``: the greedy answers of a model to a few fixed chat prompts, kept as text, so
the report can set engines side by side on the same weights (in process, mlx_lm.server,
llama-server): do they say the same thing at temperature 0, and where do they part.

In process (:class:`LoadedModel`): the chat template (``endpoint: chat``) or the raw text
(``completions``, for base models without a template), then greedy tokens until EOS or
``max_tokens``, decoded. Over HTTP (:class:`Served`): ``/v1/chat/completions`` or
``/v1/completions`` at temperature 0 with ``max_tokens``. The texts are untrusted model
output: kept raw in the record, escaped by whatever shows them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import Field

from harness.backends.base import BackendError, LoadedModel, PromptEncoding, Served
from harness.backends.openai_client import (
    ENDPOINT_PATHS,
    generation_body,
    post,
    request_failure,
    sync_client,
)
from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.scenarios.artifacts import ScenarioArtifacts
from harness.scenarios.base import BaseScenario, Params, ScenarioContext, ScenarioOutput, metric

E2E = MetricSpec("greedy_text.e2e_s", Unit.SECONDS, False, "time for one greedy answer")

PROMPTS = (
    "What is the capital of France?",
    "Name three primary colours.",
    "Write one sentence about the sea.",
    "What is 12 times 12?",
)


class GreedyTextParams(Params):
    prompts: list[str] = Field(
        default_factory=lambda: list(PROMPTS), min_length=1, description="user turns, one each"
    )
    max_tokens: int = Field(24, ge=1, le=4096, description="tokens per answer at most")
    endpoint: Literal["chat", "completions"] = Field(
        "chat", description="chat: one user turn, templated; completions: the raw text"
    )


class GreedyText(BaseScenario[GreedyTextParams]):
    name: ClassVar[str] = "greedy_text"
    version: ClassVar[int] = 1
    params_model = GreedyTextParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (E2E,)
    repeats_apply: ClassVar[bool] = False  # one answer per prompt: greedy is deterministic
    samples_from: ClassVar[str] = "prompts"

    def run(self, ctx: ScenarioContext, params: GreedyTextParams) -> ScenarioOutput:
        model = ctx.model
        if isinstance(model, Served):
            answer = served_answers(model, params, ctx.case_end)
        elif isinstance(model, LoadedModel):
            try:
                answer = in_process_answers(model, params)
            except BackendError as exc:  # no chat template: a base model
                return ScenarioOutput(
                    (), skip_reason=f"capability_mismatch: {exc}; use endpoint: completions"
                )
        else:
            reason = f"backend {ctx.backend} has neither text generation nor an HTTP server"
            return ScenarioOutput((), skip_reason=f"capability_missing: {reason}")
        texts, seconds, failures = answer
        artifacts = GreedyTextArtifacts(tuple(params.prompts), tuple(texts))
        return ScenarioOutput(
            (metric(E2E, seconds),), artifacts.to_record(), failures=tuple(failures)
        )


Answers = tuple[list[str], list[float], list[str]]


def in_process_answers(model: LoadedModel, params: GreedyTextParams) -> Answers:
    texts: list[str] = []
    seconds: list[float] = []
    for prompt in params.prompts:
        start = time.perf_counter()
        if params.endpoint == "chat":
            tokens = model.chat_tokens([{"role": "user", "content": prompt}])
        elif isinstance(model, PromptEncoding):  # with BOS, as a server's completions does
            tokens = model.encode_prompt(prompt)
        else:
            tokens = model.encode(prompt)
        out = []
        for token in model.stream_tokens(tokens, max_tokens=params.max_tokens, ignore_eos=False):
            if token in model.eos_token_ids:
                break
            out.append(token)
        texts.append(model.decode(out))
        seconds.append(time.perf_counter() - start)
    return texts, seconds, []


def served_answers(
    model: Served, params: GreedyTextParams, case_end: float | None = None
) -> Answers:
    texts: list[str] = []
    seconds: list[float] = []
    failures: list[str] = []
    with sync_client(300.0) as client:
        for index, prompt in enumerate(params.prompts):
            body = generation_body(params.endpoint, prompt, max_tokens=params.max_tokens)
            path = ENDPOINT_PATHS[params.endpoint]
            reply = post(client, model.endpoint, path, body, case_end=case_end)
            if not reply.ok:
                failures.append(f"prompt {index + 1}: {request_failure(reply, params.endpoint)}")
            texts.append(reply.content)
            seconds.append(reply.elapsed_s)
    return texts, seconds, failures


@dataclass(frozen=True)
class GreedyTextArtifacts(ScenarioArtifacts):
    """The prompts and each one's greedy answer (model output: untrusted, escaped by reports)."""

    prompts: tuple[str, ...] = ()
    outputs: tuple[str, ...] | None = None  # None: the case answered nothing


SCENARIO = GreedyText()
