"""``api_contracts``: does a served model's OpenAI-compatible API keep its contracts?

Each named check (:mod:`harness.scenarios.api_contracts.catalog`) sends real requests to the server
and returns pass, fail or not applicable (with the reason: a server without tool support
cannot be judged on tool calls), with the evidence: the requests as sent and excerpts of the
answers. The case fails, naming the checks, when any check fails. It needs nothing of the
model, only a server (``serve:`` or ``url:`` in the suite); ``repeats`` do not apply: each
check runs once. The server's answers are untrusted text, kept as data for the report, which
escapes them.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from harness.backends.base import BackendCapability, Served
from harness.backends.chat_templating import ServesChatTemplate
from harness.backends.openai_client import Reply, StreamReply, sync_client
from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.core.value_errors import value_error
from harness.scenarios.api_contracts.asking import prompt_independence
from harness.scenarios.api_contracts.catalog import CHECK_NAMES, CHECKS, DEFAULT_CHECKS
from harness.scenarios.api_contracts.verdicts import (
    PROMPT_INDEPENDENT,
    Api,
    CheckContext,
    CheckResult,
    Limits,
    Verdict,
    failed,
    records,
    unjudged,
)
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
    metric,
)

PASSED = MetricSpec("api_contracts.passed", Unit.COUNT, True, "contract checks passed")
FAILED = MetricSpec("api_contracts.failed", Unit.COUNT, False, "contract checks failed")
NOT_APPLICABLE = MetricSpec(
    "api_contracts.not_applicable",
    Unit.COUNT,
    False,
    "contract checks that cannot apply to this server (e.g. no tool support)",
)
PROMPT_TOKENS_BOUND = 256  # the checks' prompts are a few sentences


class ApiContractsParams(Params):
    checks: list[str] = Field(
        default_factory=lambda: list(DEFAULT_CHECKS),
        min_length=1,
        description="the checks to run (default: all but "
        + ", ".join(n for n in CHECK_NAMES if n not in DEFAULT_CHECKS)
        + ", which run when named: the other APIs' surfaces, and continuation and logprobs, "
        "which a server may not survive: name each in an entry of its own, after the model's "
        "other cases): " + ", ".join(CHECK_NAMES),
    )
    api: Literal["chat", "completions"] = Field(
        "chat", description="the endpoint the text checks use (tools and reasoning need chat)"
    )
    max_tokens: int = Field(24, ge=8, le=1024, description="tokens the text checks generate")
    long_max_tokens: int = Field(
        128, ge=16, le=8192, description="room for a tool call, a reasoning block, a long stream"
    )
    request_timeout_s: float = Field(
        60.0, gt=0, description="limit per request for its whole answer, seconds"
    )
    concurrency: int = Field(4, ge=2, le=64, description="requests at once in 'concurrent'")
    settle_s: float = Field(
        0.5, ge=0, le=60, description="pause after a client hangs up ('disconnect'), seconds"
    )
    require_reuse: bool = Field(
        False,
        description="'cached_tokens' fails when a repeated prompt reuses nothing; otherwise "
        "that is 'no reuse', not applicable (a server may refuse a cache it cannot trust)",
    )

    tool_names: Literal["snake", "hyphen"] = Field(
        "snake",
        description="how the tool checks' request names its tools: 'snake' (get_weather, "
        "get_time) or 'hyphen' (get-weather, get-time, as MCP servers name them); a model "
        "trained on one (zoo/gemma4-hyphen-caller: hyphen) calls only with it",
    )

    tool_call_count: Literal[1, 2] = Field(
        1,
        description="calls the tool checks' question asks for: 1 (the weather in Paris) or 2 "
        "(in Paris and in Rome: two calls in one turn; zoo/qwen2-pair-caller and "
        "zoo/mistral-pair-caller answer it)",
    )

    @field_validator("checks")
    @classmethod
    def _known_checks(cls, value: list[str]) -> list[str]:
        import difflib

        for name in value:
            if name not in CHECKS:
                close = difflib.get_close_matches(name, CHECK_NAMES, n=1)
                hint = (
                    f"did you mean '{close[0]}'?" if close else "known: " + ", ".join(CHECK_NAMES)
                )
                raise value_error(f"unknown check '{name}'", hint)
        return list(dict.fromkeys(value))


OUT_OF_TIME = "not judged: the case's time limit (timeout_s) ran out"


def _answered(result: CheckResult, answers: list[Reply | StreamReply]) -> CheckResult:
    """``result``, unless an answer it got says otherwise: cut by the case's time limit, it
    is not judged; a pass on an answer that failed (a timeout, an HTML page, a cut stream: its
    text is empty, not an answer) is a failure naming the cause. A client's own hang-up and a
    refusal the check asked for (a 4xx) are not failures of the answer."""
    if result.verdict is Verdict.UNJUDGED:
        return result
    cut = [a for a in answers if a.out_of_case_time]
    if cut:
        return unjudged(result.name, f"{OUT_OF_TIME} during it: {cut[0].failure}", result.evidence)
    if result.verdict is not Verdict.PASS:
        return result
    broken = [a for a in answers if a.error is not None and not getattr(a, "hung_up", False)]
    if broken:
        return failed(result.name, f"a request failed: {broken[0].failure}", result.evidence)
    return result


def run_checks(ctx: CheckContext, names: list[str]) -> tuple[CheckResult, ...]:
    """Each named check in catalog order, timed; a check that raises is a failure (one line).
    Once the case's time has run out, the checks not yet run are not judged (those judged
    are kept)."""
    from harness.core.exception_line import exception_line

    results = []
    for name in (n for n in CHECK_NAMES if n in names):
        if ctx.case_end is not None and time.monotonic() >= ctx.case_end:
            results.append(unjudged(name, f"{OUT_OF_TIME} before it ran"))
            continue
        start = time.perf_counter()
        ctx.answers.clear()
        try:
            result = CHECKS[name].run(ctx)
        except Exception as exc:  # a bug in a check must not hide the other verdicts
            result = CheckResult(name, Verdict.FAIL, f"the check raised {exception_line(exc)}")
        result = _answered(result, list(ctx.answers))
        if result.verdict is Verdict.PASS and CHECKS[name].compares_texts:
            independent = prompt_independence(ctx)
            if independent is not None:
                result = unjudged(name, independent, result.evidence)
        results.append(replace(result, seconds=time.perf_counter() - start))
    return tuple(results)


def summary(results: tuple[CheckResult, ...]) -> ScenarioOutput:
    counts = {v: sum(1 for r in results if r.verdict is v) for v in Verdict}
    metrics = (
        metric(PASSED, [float(counts[Verdict.PASS])]),
        metric(FAILED, [float(counts[Verdict.FAIL])]),
        metric(NOT_APPLICABLE, [float(counts[Verdict.NOT_APPLICABLE])]),
    )
    failures = tuple(f"{r.name}: {r.reason}" for r in results if r.verdict is Verdict.FAIL)
    if failures:
        names = ", ".join(r.name for r in results if r.verdict is Verdict.FAIL)
        failures = (f"API contract checks failed: {names}", *failures)
    # A check that cannot judge this model never passes: the case fails, saying why.
    blind = [
        r
        for r in results
        if r.verdict is Verdict.UNJUDGED and r.reason.startswith(PROMPT_INDEPENDENT)
    ]
    if blind:
        names = ", ".join(r.name for r in blind)
        failures = (*failures, f"API contract checks not judged: {names}: {blind[0].reason}")
    out_of_time = counts[Verdict.UNJUDGED] - len(blind)
    timed_out = None
    if out_of_time:
        judged = len(results) - out_of_time
        timed_out = (
            f"{out_of_time} of {len(results)} contract checks not judged: the "
            f"case's time limit (timeout_s) ran out; the {judged} judged are kept"
        )
    checks = tuple(CheckVerdict(r.name, CheckStatus(r.verdict.value), r.reason) for r in results)
    return ScenarioOutput(
        metrics, {"checks": records(results)}, failures, timed_out=timed_out, checks=checks
    )


class ApiContractsScenario(BaseScenario[ApiContractsParams]):
    name: ClassVar[str] = "api_contracts"
    measures_time: ClassVar[bool] = False  # check counts (per-check seconds stay in artifacts)
    version: ClassVar[int] = 1
    params_model = ApiContractsParams
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.HTTP})
    repeats_apply: ClassVar[bool] = False
    samples_from: ClassVar[str] = "checks"
    metrics: ClassVar[tuple[MetricSpec, ...]] = (PASSED, FAILED, NOT_APPLICABLE)

    def workload(self, params: ApiContractsParams) -> Workload:
        return Workload(PROMPT_TOKENS_BOUND, params.long_max_tokens)

    def run(self, ctx: ScenarioContext, params: ApiContractsParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Served):
            return lacks(ctx, BackendCapability.HTTP)
        limits = Limits(
            max_tokens=params.max_tokens,
            long_max_tokens=params.long_max_tokens,
            timeout_s=params.request_timeout_s,
            concurrency=params.concurrency,
            settle_s=params.settle_s,
            require_reuse=params.require_reuse,
            tool_names=params.tool_names,
            tool_call_count=params.tool_call_count,
        )
        with sync_client(params.request_timeout_s) as client:
            check_ctx = CheckContext(
                client,
                model.endpoint,
                Api(params.api),
                limits,
                uuid.uuid4().hex[:8],
                case_end=ctx.case_end,
                renderer=model.chat_renderer if isinstance(model, ServesChatTemplate) else None,
            )
            results = run_checks(check_ctx, params.checks)
        output = summary(results)
        artifacts: dict[str, Any] = {
            "engine": model.engine,
            "endpoint": model.endpoint.base_url,
            "api": params.api,
            **output.artifacts,
        }
        return replace(output, artifacts=artifacts)  # its timed_out and checks kept


SCENARIO = ApiContractsScenario()
