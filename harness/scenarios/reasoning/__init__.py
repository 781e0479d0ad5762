"""``reasoning``: reasoning-aware timing of a model that thinks, in process and over HTTP.

Each prompt is asked in one user turn with thinking ``on``, ``off`` (the chat template's
``enable_thinking``; over HTTP ``chat_template_kwargs``) or as the template defaults; the
answer is streamed and told apart (:mod:`~harness.scenarios.reasoning.split`): in process at
the tokenizer's think markers, over HTTP by the server's reasoning field (``reasoning_content``,
or ``reasoning`` as mlx_lm.server 0.32 sends it) or the ``<think>`` markup it left in the
content. Measured per answer: the time to the first token of any kind and to the first answer
token (llama-benchy's first response vs first content token; AIPerf #391), the reasoning and
answer token counts and each part's decode rate.

The check: where the model thinks (``thinks``; by default judged from the model: mlx-lm
recognises think markers in its tokenizer in process, its chat template has ``<think>`` over
HTTP), an answer asked with thinking on must come with its reasoning apart and a closed think
block (``off`` and ``default`` are measured only: a server's own budget may stop the
thinking). A server that sends the reasoning as content (no field, no markup), or never closes
the block (the answer counted as reasoning), fails the case. A model that does not think is not
applicable (one line). Thinking budgets: mlx-lm has none per request; llama-server's
``--reasoning-budget`` is a server flag (set in the model entry's server args, measured with
``thinking: default``); thinking off is a budget of nothing, measured with ``thinking: off``.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.backends.base import BackendError, LoadedModel, Served, Thinking
from harness.backends.chat_templating import ServesChatTemplate
from harness.backends.openai_client import (
    ENDPOINT_PATHS,
    TokenArrivals,
    request_failure,
    stream,
    sync_client,
)
from harness.core.metrics import MetricSpec
from harness.core.types import Metric, Unit
from harness.scenarios.base import BaseScenario, Params, ScenarioContext, ScenarioOutput, Workload
from harness.scenarios.reasoning.split import (
    Parts,
    Split,
    prompt_opens_block,
    served_parts,
    token_parts,
)
from harness.scenarios.token_timing import stamped
from harness.toolcalls.formats import THINK

PREFIX = "reasoning"
FIRST_ANY = MetricSpec(
    f"{PREFIX}.ttft_s", Unit.SECONDS, False, "time to the first token of any kind"
)
FIRST_ANSWER = MetricSpec(f"{PREFIX}.ttfa_s", Unit.SECONDS, False, "time to the first answer token")
REASONING_TOKENS = MetricSpec(
    f"{PREFIX}.reasoning_tokens", Unit.TOKENS, False, "reasoning tokens", noise_floor=0.1
)
ANSWER_TOKENS = MetricSpec(
    f"{PREFIX}.answer_tokens", Unit.TOKENS, False, "answer tokens", noise_floor=0.1
)
REASONING_TPS = MetricSpec(
    f"{PREFIX}.reasoning_tps", Unit.TOKENS_PER_SECOND, True, "decode rate while reasoning"
)
ANSWER_TPS = MetricSpec(
    f"{PREFIX}.answer_tps", Unit.TOKENS_PER_SECOND, True, "decode rate while answering"
)
SPECS = (FIRST_ANY, FIRST_ANSWER, REASONING_TOKENS, ANSWER_TOKENS, REASONING_TPS, ANSWER_TPS)
DEFAULT_PROMPTS = ("Where is Paris?", "Where is Tokyo?", "Where is Rome?")
REQUEST_TIMEOUT_S = 300.0
NO_BUDGET = (
    "none per request: mlx-lm has none; llama-server's --reasoning-budget is a server flag "
    "(its args); thinking off (enable_thinking=false) is a budget of nothing"
)


class ReasoningParams(Params):
    prompts: tuple[str, ...] = Field(
        DEFAULT_PROMPTS, min_length=1, description="questions, each asked in one user turn"
    )
    max_tokens: int = Field(64, ge=2, description="tokens each answer may take, reasoning too")
    thinking: Literal["on", "off", "default"] = Field(
        "on", description="enable_thinking sent to the template: on, off, or none (default)"
    )
    thinks: bool | None = Field(
        None,
        description="whether the model thinks (unset: mlx-lm's think markers in process, "
        "<think> in the chat template over HTTP)",
    )


def _thinking_kwarg(params: ReasoningParams) -> bool | None:
    return {"on": True, "off": False}.get(params.thinking)


def _messages(prompt: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}]


class _Asked:
    """Answers in process or over HTTP, each split into its parts."""

    def __init__(self, ctx: ScenarioContext, params: ReasoningParams) -> None:
        self.ctx = ctx
        self.params = params
        self.surface = "in process"
        self.thinks: bool | None = params.thinks
        self.how_known = "the thinks parameter" if params.thinks is not None else ""

    def ask(self, prompt: str) -> tuple[Parts | None, str | None, str]:
        """The parts, a failure line (or None) and the finish reason of one answer."""
        raise NotImplementedError


class _InProcess(_Asked):
    def __init__(self, ctx: ScenarioContext, params: ReasoningParams, model: Any) -> None:
        super().__init__(ctx, params)
        self.model = model
        self.markers = model.think_markers() if isinstance(model, Thinking) else None
        if self.thinks is None:
            self.thinks = self.markers is not None
            self.how_known = (
                "mlx-lm recognises think markers in its tokenizer"
                if self.markers is not None
                else "no think markers the engine recognises in its tokenizer"
            )

    def ask(self, prompt: str) -> tuple[Parts | None, str | None, str]:
        model = self.model
        kwarg = _thinking_kwarg(self.params)
        if isinstance(model, Thinking):
            tokens = model.thinking_chat_tokens(_messages(prompt), enable_thinking=kwarg)
        else:
            tokens = model.chat_tokens(_messages(prompt))
        run = stamped(
            model.stream_tokens(tokens, max_tokens=self.params.max_tokens, ignore_eos=False)
        )
        finish = "length" if len(run.tokens) >= self.params.max_tokens else "stop"
        if self.markers is None:
            text = model.decode(list(run.tokens))
            return _unsplit(run.stamps, text), None, finish
        parts = token_parts(
            run.tokens,
            run.stamps,
            self.markers,
            opened=prompt_opens_block(tokens, self.markers),
            decode=model.decode,
            eos=model.eos_token_ids,
        )
        return parts, None, finish


def _unsplit(stamps: tuple[float, ...], text: str) -> Parts:
    ones = TokenArrivals(stamps, tuple(1 for _ in stamps), "tokenizer")
    first = stamps[0] if stamps else None
    return Parts(TokenArrivals((), (), "tokenizer"), ones, first, first, Split.NONE, True)


class _OverHttp(_Asked):
    def __init__(self, ctx: ScenarioContext, params: ReasoningParams, model: Served) -> None:
        super().__init__(ctx, params)
        self.model = model
        self.surface = f"over HTTP ({model.engine})"
        if self.thinks is None:
            renderer = model.chat_renderer if isinstance(model, ServesChatTemplate) else None
            template = renderer.chat_template_text() if renderer is not None else None
            if template is not None:
                self.thinks = THINK[0] in template
                self.how_known = (
                    "its chat template has <think>"
                    if self.thinks
                    else "its chat template has no <think>"
                )

    def ask(self, prompt: str) -> tuple[Parts | None, str | None, str]:
        body: dict[str, Any] = {
            "messages": _messages(prompt),
            "max_tokens": self.params.max_tokens,
            "temperature": 0.0,
        }
        kwarg = _thinking_kwarg(self.params)
        if kwarg is not None:
            body["chat_template_kwargs"] = {"enable_thinking": kwarg}
        with sync_client(REQUEST_TIMEOUT_S) as client:
            reply = stream(
                client,
                self.model.endpoint,
                ENDPOINT_PATHS["chat"],
                body,
                case_end=self.ctx.case_end,
            )
        if not reply.ok:
            return None, request_failure(reply, "chat"), ""
        return served_parts(reply.chunks, self.model.token_counter), None, reply.finish_reason or ""


def told_apart(parts: Parts, finish: str, max_tokens: int) -> str | None:
    """Why reasoning and answer were not told apart in an answer of a model that thinks,
    asked with thinking on (None: they were)."""
    if parts.split is Split.NONE:
        return (
            f"no reasoning apart from the answer ({parts.answer.tokens} tokens all counted as "
            "answer): no reasoning field, no think markup, no think tokens; the reasoning, if "
            "any, was counted as answer"
        )
    if not parts.closed:
        if finish == "length":
            return (
                f"the think block did not close within max_tokens {max_tokens}: no answer to "
                "time (raise max_tokens), or the answer was counted as reasoning"
            )
        return (
            "the think block never closed though the model ended its turn: the answer was "
            f"counted as reasoning ({parts.reasoning.tokens} tokens, none of answer)"
        )
    return None


def _median(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None and not math.isnan(v)]
    return statistics.median(kept) if kept else None


class ReasoningScenario(BaseScenario[ReasoningParams]):
    name: ClassVar[str] = "reasoning"
    version: ClassVar[int] = 1
    params_model = ReasoningParams
    samples_from: ClassVar[str] = "prompts"
    metrics: ClassVar[tuple[MetricSpec, ...]] = SPECS
    headline_metrics: ClassVar[tuple[str, ...]] = (FIRST_ANSWER.name,)

    def workload(self, params: ReasoningParams) -> Workload:
        longest = max(len(p) for p in params.prompts) // 3 + 32  # the template's turn around it
        return Workload(longest, params.max_tokens)

    def run(self, ctx: ScenarioContext, params: ReasoningParams) -> ScenarioOutput:
        model = ctx.model
        asked: _Asked
        if isinstance(model, Served):
            asked = _OverHttp(ctx, params, model)
        elif isinstance(model, LoadedModel):
            asked = _InProcess(ctx, params, model)
        else:
            reason = f"backend {ctx.backend} has neither text generation nor an HTTP server"
            return ScenarioOutput((), skip_reason=f"capability_missing: {reason}")
        try:
            return self._run(ctx, params, asked)
        except BackendError as exc:  # no chat template: a base model
            return ScenarioOutput((), skip_reason=f"capability_mismatch: {exc}")

    def _run(self, ctx: ScenarioContext, params: ReasoningParams, asked: _Asked) -> ScenarioOutput:
        if asked.thinks is False and params.thinks is None:  # known from the model: not asked
            return ScenarioOutput(
                (), skip_reason=f"not applicable: the model does not think ({asked.how_known})"
            )
        for _ in range(ctx.warmup):
            _, why, _ = asked.ask(params.prompts[0])
            if why:
                return ScenarioOutput((), failures=(f"the warm-up request failed: {why}",))
            ctx.run_done(None)
        answers: list[tuple[str, Parts, str]] = []
        failures: list[str] = []
        for _ in range(max(ctx.repeats, 1)):
            for prompt in params.prompts:
                parts, why, finish = asked.ask(prompt)
                if why or parts is None:
                    failures.append(f"{prompt!r}: {why}")
                    continue
                answers.append((prompt, parts, finish))
                ctx.run_done(parts.reasoning.tokens + parts.answer.tokens)
        if not answers:
            return ScenarioOutput((), failures=tuple(failures) or ("no answer",))
        seen = any(p.split is not Split.NONE for _, p, _ in answers)
        thinks = asked.thinks if asked.thinks is not None else seen
        how = asked.how_known or ("think output seen" if seen else "no think output seen")
        if not thinks and not seen:
            return ScenarioOutput(
                (), skip_reason=f"not applicable: the model does not think ({how})"
            )
        if params.thinking == "on" and thinks:
            apart = [(p, told_apart(parts, f, params.max_tokens)) for p, parts, f in answers]
            broken = [(p, why) for p, why in apart if why]
            if broken:
                prompt, why = broken[0]
                failures.append(
                    f"reasoning and answer not told apart {asked.surface} in {len(broken)} of "
                    f"{len(answers)} answers ({how}): {prompt!r}: {why}"
                )
        metrics = _metrics([parts for _, parts, _ in answers])
        off_reasoning = sum(p.reasoning.tokens for _, p, _ in answers)
        artifacts: dict[str, Any] = {
            "surface": asked.surface,
            "thinking": params.thinking,
            "thinks": thinks,
            "thinks_because": how,
            "split": sorted({p.split.value for _, p, _ in answers}),
            "reasoning_field": next((p.field for _, p, _ in answers if p.field), None),
            "thinking_budget": NO_BUDGET,
            "answers": [
                {"prompt": prompt, "finish_reason": finish, **parts.as_dict()}
                for prompt, parts, finish in answers[: len(params.prompts)]
            ],
            "summary": {
                "first_any_s": _median([p.first_any_s for _, p, _ in answers]),
                "first_answer_s": _median([p.first_answer_s for _, p, _ in answers]),
                "reasoning_tokens": _median([float(p.reasoning.tokens) for _, p, _ in answers]),
                "answer_tokens": _median([float(p.answer.tokens) for _, p, _ in answers]),
                "reasoning_tps": _median([p.reasoning.decode_tps() for _, p, _ in answers]),
                "answer_tps": _median([p.answer.decode_tps() for _, p, _ in answers]),
            },
        }
        if params.thinking == "off":
            artifacts["off_honoured"] = off_reasoning == 0
        return ScenarioOutput(metrics, artifacts, failures=tuple(failures))


def _metrics(answers: list[Parts]) -> tuple[Metric, ...]:
    columns: list[tuple[MetricSpec, list[float | None]]] = [
        (FIRST_ANY, [p.first_any_s for p in answers]),
        (FIRST_ANSWER, [p.first_answer_s for p in answers]),
        (REASONING_TOKENS, [float(p.reasoning.tokens) for p in answers]),
        (ANSWER_TOKENS, [float(p.answer.tokens) for p in answers]),
        (REASONING_TPS, [p.reasoning.decode_tps() for p in answers]),
        (ANSWER_TPS, [p.answer.decode_tps() for p in answers]),
    ]
    out = []
    for spec, values in columns:
        kept = tuple(v for v in values if v is not None and not math.isnan(v))
        if kept:
            out.append(Metric(spec.name, spec.unit, kept))
    return tuple(out)


SCENARIO = ReasoningScenario()
