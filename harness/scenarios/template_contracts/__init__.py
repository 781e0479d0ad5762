"""``template_contracts``: what a model's chat template and tokenizer promise an engine, checked
by rendering (no generation, so it is cheap). Each check is named, has a verdict and evidence:

- ``double_bos``: the template writes BOS and the tokenizer adds it again. ``fail`` when the
  backend's own chat tokens start with two BOS; ``warn`` when only a server that renders the
  template to text and encodes it with special tokens (a completions-style path) gets two;
- ``system_role``: a system message is ``supported``, ``folded`` into the first user turn,
  ``rejected`` by the template (all fine: an engine must know which), or ``dropped`` silently
  (``fail``);
- ``alternation``: two user turns in a row are ``enforced`` (the template raises) or
  ``not_enforced`` (an engine may send them; informative);
- ``tools_kwarg``: ``tools=`` is ``rendered`` (the tool's name appears), ``ignored`` (``warn``:
  tools silently absent from the prompt) or ``rejected`` (``warn``: the call raises);
- ``enable_thinking_kwarg``: ``enable_thinking=`` is ``honoured`` (True and False render
  differently), ``ignored`` or ``rejected`` (``warn``).

First the template must render one plain user turn: when even that raises, no check can tell
a template's refusal from a broken renderer, so the case fails with the renderer's error
instead of reading every error as a refusal ("alternation enforced", "system rejected").
Version 2: that first render (version 1 judged the checks on a broken renderer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, ClassVar

from harness.backends.base import BackendCapability, BackendError, LoadedModel, PromptEncoding
from harness.backends.chat_templating import ChatTemplating
from harness.core.check_types import CheckStatus
from harness.core.check_types import CheckVerdict as RecordedCheck
from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.probe.types import Capability
from harness.scenarios.artifacts import ScenarioArtifacts
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    metric,
)

EVIDENCE_CHARS = 160
SYSTEM = "You answer in French."
USER = "What is the capital of Italy?"
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather_zq",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


class CheckVerdict(str, Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    NOT_APPLICABLE = "n/a"


@dataclass(frozen=True)
class ContractCheck:
    name: str
    verdict: CheckVerdict
    outcome: str  # one word: supported, folded, rejected, ...
    evidence: str  # one line, untrusted text (template output) shortened


# each check's verdict as the record keeps it (CaseResult.checks)
RECORDED = {
    CheckVerdict.PASS: CheckStatus.PASS,
    CheckVerdict.WARN: CheckStatus.WARN,
    CheckVerdict.FAIL: CheckStatus.FAIL,
    CheckVerdict.NOT_APPLICABLE: CheckStatus.NOT_APPLICABLE,
}


def verdicts(checks: Sequence[ContractCheck]) -> tuple[RecordedCheck, ...]:
    """The checks' own verdicts for the record; the reason is the outcome word (the
    evidence, template output, stays in the artifact)."""
    return tuple(RecordedCheck(c.name, RECORDED[c.verdict], c.outcome) for c in checks)


PASSED = MetricSpec("template_contracts.passed", Unit.COUNT, True, "checks that pass")
WARNED = MetricSpec("template_contracts.warned", Unit.COUNT, False, "checks with a warning")
FAILED = MetricSpec("template_contracts.failed", Unit.COUNT, False, "checks that fail")


def _line(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= EVIDENCE_CHARS else flat[: EVIDENCE_CHARS - 3] + "..."


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def _render(model: ChatTemplating, messages: Sequence[Mapping[str, Any]], **kw: Any) -> str:
    return model.render_chat(messages, **kw)


def _leading(tokens: Sequence[int], token: int) -> int:
    n = 0
    for t in tokens:
        if t != token:
            break
        n += 1
    return n


def double_bos(model: Any) -> ContractCheck:
    bos = model.bos_token_id
    if bos is None:
        return ContractCheck("double_bos", CheckVerdict.NOT_APPLICABLE, "no_bos", "no BOS token")
    messages = [_user(USER)]
    engine = _leading(model.chat_tokens(messages), bos)
    served = _leading(model.encode_prompt(_render(model, messages)), bos)
    evidence = f"BOS id {bos}: chat tokens start with {engine}, rendered text encoded with "
    evidence += f"special tokens starts with {served}"
    if engine > 1:
        return ContractCheck("double_bos", CheckVerdict.FAIL, "engine_double", evidence)
    if served > 1:
        return ContractCheck("double_bos", CheckVerdict.WARN, "text_path_double", evidence)
    return ContractCheck("double_bos", CheckVerdict.PASS, "single", evidence)


def system_role(model: ChatTemplating) -> ContractCheck:
    try:
        text = _render(model, [{"role": "system", "content": SYSTEM}, _user(USER)])
    except BackendError as exc:
        return ContractCheck("system_role", CheckVerdict.PASS, "rejected", _line(str(exc)))
    if SYSTEM not in text:
        return ContractCheck(
            "system_role", CheckVerdict.FAIL, "dropped", "the system text is not in the prompt"
        )
    for sep in ("\n\n", "\n", " "):
        try:
            if text == _render(model, [_user(SYSTEM + sep + USER)]):
                return ContractCheck(
                    "system_role",
                    CheckVerdict.PASS,
                    "folded",
                    f"rendered as the first user turn, joined by {sep!r}",
                )
        except BackendError:
            break
    at = text.index(SYSTEM)
    return ContractCheck(
        "system_role", CheckVerdict.PASS, "supported", _line(text[max(0, at - 40) : at])
    )


def alternation(model: ChatTemplating) -> ContractCheck:
    try:
        _render(model, [_user(USER), _user("And of France?")])
    except BackendError as exc:
        return ContractCheck("alternation", CheckVerdict.PASS, "enforced", _line(str(exc)))
    return ContractCheck(
        "alternation", CheckVerdict.PASS, "not_enforced", "two user turns in a row render"
    )


def tools_kwarg(model: ChatTemplating) -> ContractCheck:
    try:
        text = _render(model, [_user(USER)], tools=[TOOL])
    except BackendError as exc:
        return ContractCheck("tools_kwarg", CheckVerdict.WARN, "rejected", _line(str(exc)))
    name = str(TOOL["function"]["name"])  # type: ignore[index]
    if name in text:
        return ContractCheck("tools_kwarg", CheckVerdict.PASS, "rendered", f"{name} in the prompt")
    return ContractCheck(
        "tools_kwarg", CheckVerdict.WARN, "ignored", f"{name} absent: tools silently dropped"
    )


def thinking_kwarg(model: ChatTemplating) -> ContractCheck:
    name = "enable_thinking_kwarg"
    messages = [_user(USER)]
    try:
        on = _render(model, messages, enable_thinking=True)
        off = _render(model, messages, enable_thinking=False)
    except BackendError as exc:
        return ContractCheck(name, CheckVerdict.WARN, "rejected", _line(str(exc)))
    if on != off:
        return ContractCheck(name, CheckVerdict.PASS, "honoured", "True and False render apart")
    return ContractCheck(name, CheckVerdict.PASS, "ignored", "True and False render alike")


CHECKS = (double_bos, system_role, alternation, tools_kwarg, thinking_kwarg)


def cannot_render(model: ChatTemplating) -> str | None:
    """Why the template cannot render one plain user turn (a broken renderer: every check
    would read its error as a refusal); None when it can."""
    try:
        _render(model, [_user(USER)])
    except BackendError as exc:
        return (
            "the template cannot render one plain user turn, so no contract can be judged: "
            + _line(str(exc))
        )
    return None


@dataclass(frozen=True)
class TemplateCheckRecord:
    """One check as the case's ``checks`` artifact holds it."""

    name: str
    verdict: str | None = None  # a CheckVerdict value
    outcome: str = ""
    evidence: str = ""  # rendered template output (untrusted: escaped by reports)


@dataclass(frozen=True)
class TemplateContractsArtifacts(ScenarioArtifacts):
    checks: tuple[TemplateCheckRecord, ...] = ()


class TemplateContractsParams(Params):
    pass


class TemplateContractsScenario(BaseScenario[TemplateContractsParams]):
    name: ClassVar[str] = "template_contracts"
    measures_time: ClassVar[bool] = False  # check counts
    version: ClassVar[int] = 2
    params_model = TemplateContractsParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (PASSED, WARNED, FAILED)
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.CHAT})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.TEXT_GENERATION}
    )

    def workload(self, params: TemplateContractsParams) -> Workload:
        return Workload(64, 0)

    def run(self, ctx: ScenarioContext, params: TemplateContractsParams) -> ScenarioOutput:
        model = ctx.model
        if not (
            isinstance(model, ChatTemplating)
            and isinstance(model, LoadedModel)
            and isinstance(model, PromptEncoding)
        ):
            return ScenarioOutput(
                (), skip_reason=f"capability_missing: backend {ctx.backend} renders no template"
            )
        if not model.chat_template_text():
            return ScenarioOutput((), skip_reason="the model has no chat template")
        broken = cannot_render(model)
        if broken is not None:
            return ScenarioOutput((), failures=(broken,))
        checks = [check(model) for check in CHECKS]
        count = {v: sum(c.verdict is v for c in checks) for v in CheckVerdict}
        artifacts = {"checks": [{**asdict(c), "verdict": c.verdict.value} for c in checks]}
        failures = tuple(
            f"{c.name}: {c.outcome} ({c.evidence})"
            for c in checks
            if c.verdict is CheckVerdict.FAIL
        )
        metrics = (
            metric(PASSED, [float(count[CheckVerdict.PASS])]),
            metric(WARNED, [float(count[CheckVerdict.WARN])]),
            metric(FAILED, [float(count[CheckVerdict.FAIL])]),
        )
        return ScenarioOutput(metrics, artifacts, failures=failures, checks=verdicts(checks))


SCENARIO = TemplateContractsScenario()
