"""``tool_calls``: tool-calling prompts through the real backend, parsed as its server parses them.

For each BFCL-style prompt (``suites/data/toolcalls/live``: simple, multiple, parallel,
irrelevance) the prompt is rendered with the chat template and the tools, generated greedily
until EOS or ``max_tokens``, and the generated tokens are replayed through the server's own
parsing twice: non-streamed (the whole text at once) and streamed (one detokenizer segment per
token). The non-streamed calls are scored as structures against the expected calls.

Live layer: whether a parser was inferred from the template, the share of replies with call
markup that parse, stream/non-stream parity, markup leaked into content, calls dropped silently.
Correctness layer: accuracy overall and per category, each miss named by the corpus layer's
failure classes; text arguments compare under ``string_match`` (strict, or BFCL's), which the
artifacts name. ``chat_template`` swaps in a shipped template (as ``mlx_lm.server
--chat-template`` does), so the parser is inferred from it, never forced. Greedy decoding is
deterministic, so each prompt runs once (``repeats`` and ``warmup`` do not apply).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from harness.backends.base import BackendCapability, BackendError, ToolCalling
from harness.core.metrics import MetricSpec
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
    metric,
)
from harness.toolcalls import bfcl_data, shipped
from harness.toolcalls.formats import get_format
from harness.toolcalls.live import Category, LiveSet, Prompt
from harness.toolcalls.live_score import PromptResult, record, summarise
from harness.toolcalls.match import score
from harness.toolcalls.values import StringMatch

CategoryName = Literal["simple", "multiple", "parallel", "parallel_multiple", "irrelevance"]
StringMatchName = Literal["strict", "bfcl"]  # harness.toolcalls.values.StringMatch
FinishReason = Literal["stop", "length"]
# The shipped prompts render to 210-850 tokens (SmolLM2's tokenizer, tools and few-shot turns
# included; zoo tokenizers alike): this bounds one request for the memory estimate.
PROMPT_TOKENS_BOUND = 1024

PARSER = MetricSpec(
    "tool_calls.parser_inferred", Unit.RATIO, True, "1 when the backend inferred a tool parser"
)
PROMPTS = MetricSpec("tool_calls.prompts", Unit.COUNT, True, "prompts run")
MARKUP = MetricSpec("tool_calls.markup_outputs", Unit.COUNT, True, "replies holding call markup")
PARSE_SHARE = MetricSpec(
    "tool_calls.markup_parse_share",
    Unit.RATIO,
    True,
    "replies with call markup whose calls all parse / replies with call markup",
)
PARITY = MetricSpec(
    "tool_calls.stream_parity_share",
    Unit.RATIO,
    True,
    "replies whose streamed calls equal the non-streamed ones / replies",
)
LEAKED = MetricSpec(
    "tool_calls.leaked_markup", Unit.COUNT, False, "replies with call markup in their content"
)
DROPPED = MetricSpec(
    "tool_calls.dropped_calls", Unit.COUNT, False, "tool texts the server failed to parse, silently"
)
REQUEST_ERRORS = MetricSpec(
    "tool_calls.request_errors",
    Unit.COUNT,
    False,
    "replies whose parsing raised past the server's handler (the request fails)",
)
ACCURACY = MetricSpec("tool_calls.accuracy", Unit.RATIO, True, "prompts answered right / prompts")
CATEGORY_ACCURACY = {
    c: MetricSpec(
        f"tool_calls.accuracy_{c.value}", Unit.RATIO, True, f"accuracy on {c.value} prompts"
    )
    for c in Category
}


class ToolCallsParams(Params):
    chat_template: str = Field(
        shipped.MODEL_TEMPLATE,
        description="'model' (the model's own), a shipped template name "
        "(suites/data/toolcalls/templates) or a path to a .jinja file",
    )
    fewshot: bool = Field(True, description="put the example turns before every prompt")
    categories: list[CategoryName] = Field(
        default_factory=lambda: [c.value for c in Category],
        min_length=1,
        description="prompt categories to run (default: all)",
    )
    per_category: int | None = Field(None, ge=1, description="first N prompts of each category")
    max_tokens: int = Field(160, ge=8, description="generation limit per prompt")
    data: str | None = Field(
        None,
        description="live prompt directory (default: the shipped set), or 'bfcl' / "
        "'bfcl:<stem>,...' for the pinned bfcl-eval data (e.g. bfcl:simple_python,parallel), "
        "imported into the cache on first use",
    )
    sample: Literal["first", "spread"] = Field(
        "first",
        description="with per_category: the first N prompts of each category, or N spread "
        "evenly over it (the same N every run)",
    )
    require_parity: bool = Field(
        True, description="fail the case when streamed and non-streamed calls differ"
    )
    string_match: StringMatchName = Field(
        StringMatch.STRICT.value,
        description="how text arguments compare: 'strict' (case and whitespace folded) or "
        "'bfcl' (BFCL's standardize_string: spaces and punctuation dropped too)",
    )

    @field_validator("data")
    @classmethod
    def _known_bfcl(cls, value: str | None) -> str | None:
        if value is not None:
            bfcl_data.source_stems(value)  # ValueError names the known stems
        return value

    @field_validator("chat_template")
    @classmethod
    def _known_template(cls, value: str) -> str:
        if value != shipped.MODEL_TEMPLATE:
            shipped.template_path(value)  # ValueError names the shipped ones
        return value


def _select(live: LiveSet, p: ToolCallsParams) -> list[Prompt]:
    chosen: list[Prompt] = []
    for name in p.categories:
        mine = [q for q in live.prompts if q.category is Category(name)]
        n = p.per_category
        if n is None or n >= len(mine):
            chosen += mine
        elif p.sample == "spread":
            chosen += [mine[i * len(mine) // n] for i in range(n)]
        else:
            chosen += mine[:n]
    return chosen


def _run_prompt(
    model: ToolCalling, prompt: Prompt, live: LiveSet, p: ToolCallsParams
) -> PromptResult:
    messages = [*live.fewshot.messages, *prompt.messages] if p.fewshot else [*prompt.messages]
    tools = [*prompt.tools, *live.fewshot.tools] if p.fewshot else [*prompt.tools]
    start = time.perf_counter()
    try:
        tokens = model.chat_tokens(messages, tools=tools)
    except Exception as exc:  # a template that rejects tools or tool-call turns: the case errors
        first = (str(exc).strip().splitlines() or [""])[0]
        raise BackendError(
            f"the chat template cannot render {prompt.id} with tools: {type(exc).__name__}: {first}"
        ) from exc
    generated = list(model.stream_tokens(tokens, max_tokens=p.max_tokens, ignore_eos=False))
    finish: FinishReason = "length" if len(generated) >= p.max_tokens else "stop"
    whole, streamed = model.replay_server(tokens, generated, tools, finish)
    seconds = time.perf_counter() - start
    fmt = get_format(model.tool_parser_name() or "")
    markup = tuple(dict.fromkeys((*model.tool_markers(), *(fmt.markup if fmt else ()))))
    return PromptResult(
        prompt=prompt,
        raw=model.decode(generated),
        finish_reason=finish,
        prompt_tokens=len(tokens),
        generated_tokens=len(generated),
        whole=whole,
        streamed=streamed,
        verdict=score(prompt.expected, whole, markup, tools, StringMatch(p.string_match)),
        markup=markup,
        seconds=seconds,
    )


def _metrics(results: list[PromptResult]) -> list[Metric]:
    s = summarise(results)
    found = [
        metric(PARSER, [1.0]),
        metric(PROMPTS, [float(s.prompts)]),
        metric(MARKUP, [float(s.markup_outputs)]),
        metric(PARITY, [s.parity / max(s.prompts, 1)]),
        metric(LEAKED, [float(s.leaked)]),
        metric(DROPPED, [float(s.dropped)]),
        metric(REQUEST_ERRORS, [float(s.request_errors)]),
        metric(ACCURACY, [s.accuracy]),
    ]
    if s.markup_outputs:
        found.insert(3, metric(PARSE_SHARE, [s.parsed / s.markup_outputs]))
    found += [metric(CATEGORY_ACCURACY[c.category], [c.accuracy]) for c in s.categories]
    return found


class ToolCallsScenario(BaseScenario[ToolCallsParams]):
    name: ClassVar[str] = "tool_calls"
    measures_time: ClassVar[bool] = False  # counts and ratios (seconds only in artifacts)
    version: ClassVar[int] = 2  # 2: typed as Python, required enforced, any-size pairing
    params_model = ToolCallsParams
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.CHAT})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.TEXT_GENERATION, BackendCapability.TOOL_PARSING}
    )
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        PARSER,
        PROMPTS,
        MARKUP,
        PARSE_SHARE,
        PARITY,
        LEAKED,
        DROPPED,
        REQUEST_ERRORS,
        ACCURACY,
        *CATEGORY_ACCURACY.values(),
    )

    def workload(self, params: ToolCallsParams) -> Workload:
        return Workload(PROMPT_TOKENS_BOUND, params.max_tokens)

    def run(self, ctx: ScenarioContext, params: ToolCallsParams) -> ScenarioOutput:
        p = params
        model = ctx.model
        if not isinstance(model, ToolCalling):
            return lacks(ctx, BackendCapability.TOOL_PARSING)
        template = p.chat_template
        if template != shipped.MODEL_TEMPLATE:
            model = model.with_chat_template(shipped.template_path(template).read_text())
        try:
            parser = model.tool_parser_name()
        except AttributeError as exc:  # a release before tool parsers (mlx-lm 0.27 and older)
            why = f"n/a: the installed {ctx.backend} has no tool parsing ({exc})"
            return ScenarioOutput((), {"chat_template": template}, skip_reason=why)
        text = model.chat_template_text()
        artifacts: dict[str, Any] = {
            "chat_template": template,
            "chat_template_sha256": shipped.sha256_text(text),
            "parser": parser,
            "fewshot": p.fewshot,
            "max_tokens": p.max_tokens,
            "string_match": p.string_match,
        }
        if parser is None:
            names = ", ".join(shipped.template_names())
            why = f"no tool parser: {ctx.backend} infers none from " + (
                "the model's chat template; give a template with tool markup, e.g. "
                f"chat_template: {names} (shipped) or a .jinja path"
                if template == "model"
                else f"template {template!r}; give a template with tool markup"
            )
            return ScenarioOutput((metric(PARSER, [0.0]),), artifacts, skip_reason=why)
        live = bfcl_data.load_source(p.data)
        results = [_run_prompt(model, prompt, live, p) for prompt in _select(live, p)]
        summary = summarise(results)
        artifacts.update(
            {
                "categories": {
                    c.category.value: {"prompts": c.prompts, "ok": c.ok} for c in summary.categories
                },
                "failure_counts": {f.value: n for f, n in summary.failures},
                "prompts": [record(r) for r in results],
            }
        )
        failures: tuple[str, ...] = ()
        differing = [r.prompt.id for r in results if not r.parity]
        if p.require_parity and differing:
            failures = (
                f"streamed calls differ from non-streamed ones on {len(differing)} of "
                f"{len(results)} prompts (first: {differing[0]})",
            )
        return ScenarioOutput(tuple(_metrics(results)), artifacts, failures=failures)


@dataclass(frozen=True)
class RecordedCall:
    """One parsed tool call as a prompt's record holds it."""

    name: str | None = None
    arguments: Any = None


@dataclass(frozen=True)
class PromptRecord:
    """What one prompt's record holds that the report shows
    (:func:`harness.toolcalls.live_score.record` writes it)."""

    id: str = "?"
    category: str = ""
    failure: str = ""  # a CallFailure's value; "ok" when the calls were right
    detail: str = ""
    question: str = ""
    raw: str = ""  # the model's raw output (escaped by the report)
    finish_reason: str | None = None
    calls: tuple[RecordedCall, ...] = ()  # non-streamed
    content: str | None = None
    errors: tuple[str, ...] = ()  # calls the server dropped, silently
    crash: str | None = None  # parsing raised: the request fails
    stream_calls: tuple[RecordedCall, ...] = ()
    stream_content: str | None = None
    stream_crash: str | None = None
    parity: bool = True  # the same calls streamed and not


@dataclass(frozen=True)
class CategoryScore:
    prompts: int = 0
    ok: int = 0


@dataclass(frozen=True)
class ToolCallsArtifacts(ScenarioArtifacts):
    """What a ``tool_calls`` case records beside its metrics."""

    chat_template: str | None = None  # "model" or a shipped template's name or path
    chat_template_sha256: str | None = None
    parser: str | None = None  # the tool parser the backend inferred (None: none)
    fewshot: bool | None = None
    categories: dict[str, CategoryScore] | None = None  # by Category value
    failure_counts: dict[str, int] | None = None  # by CallFailure value
    prompts: tuple[PromptRecord, ...] = ()


SCENARIO = ToolCallsScenario()
