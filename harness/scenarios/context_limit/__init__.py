"""``context_limit``: a request past the context window must get an error, never a silent
truncation or shift, and the record says which happened.

The window: ``context_tokens`` when given; over HTTP the server's own (llama-server's
``/props`` ``default_generation_settings.n_ctx``, else ``/slots``), else the model files'
stated length (``max_position_embeddings`` or kin: mlx_lm.server has no window of its own);
in process the model files' stated length. Then three greedy requests
(:mod:`harness.scenarios.context_limit.requests`), each classified
(:mod:`harness.scenarios.context_limit.outcome`):

- ``inside``: a prompt of window - max_tokens - 16 tokens: must be answered (``ok``);
- ``past_window``: a prompt of window + ``margin_tokens``: must be refused (``error``), or with
  ``require: no_silent_loss`` may also be processed whole (``accepted``: nothing enforces the
  window; RoPE just goes on) with that finding in the artifacts;
- ``generation_past_window`` (``check_generation``): a prompt of window - ``overrun_tokens``
  asking 2 x ``overrun_tokens`` tokens (EOS ignored): refused, or stopped at the window
  (``stopped``), passes; going on past a server's own window (``shifted``: llama-server's
  ``--context-shift``) fails.

A server that counts fewer prompt tokens than were sent and answers anyway (``truncated``), or
generates past its own window (``shifted``), fails the case with one line of the numbers.
``require`` defaults to ``error`` over HTTP and to ``no_silent_loss`` in process (mlx-lm
enforces no window in process: a case there records ``accepted``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal, Protocol

from pydantic import Field

from harness.backends.base import BackendCapability, LoadedModel, Served
from harness.core.metrics import MetricSpec
from harness.core.types import Metric, Unit
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
from harness.scenarios.context_limit.outcome import (
    Answer,
    Outcome,
    Probe,
    Require,
    Window,
    WindowSource,
    classify,
    describe,
    failure,
)
from harness.scenarios.context_limit.requests import InProcess, OverHttp
from harness.scenarios.context_limit.window import folder_window, server_window

PREFIX = "context_limit"
WINDOW = MetricSpec(f"{PREFIX}.window_tokens", Unit.TOKENS, True, "the context window tested")
PAST = MetricSpec(
    f"{PREFIX}.past_window_tokens", Unit.TOKENS, True, "prompt tokens sent past the window"
)
INSIDE_SLACK = 16  # tokens left free inside the window besides max_tokens (BOS, odd splits)


class ContextLimitParams(Params):
    context_tokens: int | None = Field(
        None,
        ge=32,
        description="the window to test (unset: the server's own, else the model files' "
        "max_position_embeddings)",
    )
    margin_tokens: int = Field(64, ge=1, description="how far past the window the long prompt is")
    max_tokens: int = Field(8, ge=1, description="tokens asked of the inside and past requests")
    check_generation: bool = Field(
        True, description="also send a prompt inside whose prompt + max_tokens runs past"
    )
    overrun_tokens: int = Field(
        32, ge=2, description="generation probe: prompt of window - this, asking twice this"
    )
    require: Literal["error", "no_silent_loss"] | None = Field(
        None,
        description="what a prompt past the window must get: error (a refusal), or "
        "no_silent_loss (a refusal or processing it whole); unset: error over HTTP, "
        "no_silent_loss in process",
    )


class Sender(Protocol):
    def send(self, n_tokens: int, max_tokens: int) -> Answer: ...


class ContextLimit(BaseScenario[ContextLimitParams]):
    name: ClassVar[str] = "context_limit"
    version: ClassVar[int] = 1
    params_model = ContextLimitParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (WINDOW, PAST)
    repeats_apply: ClassVar[bool] = False  # one pass: the outcomes are not timings
    samples_from: ClassVar[str] = "probes"
    measures_time: ClassVar[bool] = False

    def workload(self, params: ContextLimitParams) -> Workload | None:
        if params.context_tokens is None:
            return None
        return Workload(params.context_tokens + params.margin_tokens, params.max_tokens)

    def run(self, ctx: ScenarioContext, params: ContextLimitParams) -> ScenarioOutput:
        model = ctx.model
        sender: Sender
        if isinstance(model, Served):
            if model.token_counter is None:
                return ScenarioOutput(
                    (),
                    skip_reason=f"{ReasonCode.CAPABILITY_MISMATCH.value}: no local tokenizer to "
                    "count the prompt tokens sent (give the url: model a path:)",
                )
            sender = OverHttp(model, model.token_counter, ctx.case_end)
            window = _http_window(ctx, model, params)
            require = Require(params.require or Require.ERROR.value)
        elif isinstance(model, LoadedModel):
            sender = InProcess(model)
            window = _given(params) or folder_window(_model_path(model))
            require = Require(params.require or Require.NO_SILENT_LOSS.value)
        else:
            return lacks(ctx, BackendCapability.TEXT_GENERATION)
        if window is None:
            return ScenarioOutput(
                (),
                skip_reason="no context window known: the server tells none and the model "
                "files state none; set params: {context_tokens: N}",
            )
        output = judge(sender, window, require, params)
        engine = model.engine if isinstance(model, Served) else "in process"
        return dataclasses.replace(output, artifacts={"engine": engine, **output.artifacts})


def judge(
    sender: Sender, window: Window, require: Require, params: ContextLimitParams
) -> ScenarioOutput:
    """Send the probes, classify each, and fail on the outcomes ``require`` does not allow."""
    plan = [
        (Probe.INSIDE, max(window.tokens - params.max_tokens - INSIDE_SLACK, 1), params.max_tokens),
        (Probe.PAST, window.tokens + params.margin_tokens, params.max_tokens),
    ]
    if params.check_generation:
        overrun = min(params.overrun_tokens, window.tokens - 1)
        plan.append((Probe.GENERATION, window.tokens - overrun, 2 * overrun))
    outcomes: dict[str, str] = {}
    lines: dict[str, str] = {}
    failures: list[str] = []
    past_sent = 0
    for probe, n_tokens, max_tokens in plan:
        answer = sender.send(n_tokens, max_tokens)
        outcome = classify(answer, window)
        outcomes[probe.value] = outcome.value
        lines[probe.value] = describe(probe, answer, window, outcome)
        if probe is Probe.PAST:
            past_sent = answer.sent_tokens
        found = failure(probe, answer, window, outcome, require)
        if found is not None:
            failures.append(found)
    finding = (
        f"nothing enforces the window of {window.tokens} tokens: a request past it was "
        "processed whole, no error"
        if Outcome.ACCEPTED.value in outcomes.values()
        else None
    )
    artifacts = ContextLimitArtifacts(
        window_tokens=window.tokens,
        window_source=window.source.value,
        window_detail=window.detail,
        require=require.value,
        outcomes=outcomes,
        probes=lines,
        finding=finding,
    ).to_record()
    metrics = (
        Metric(WINDOW.name, WINDOW.unit, (float(window.tokens),)),
        Metric(PAST.name, PAST.unit, (float(past_sent),)),
    )
    return ScenarioOutput(metrics, artifacts, failures=tuple(failures))


def _given(params: ContextLimitParams) -> Window | None:
    if params.context_tokens is None:
        return None
    return Window(params.context_tokens, WindowSource.PARAM, "params.context_tokens")


def _http_window(ctx: ScenarioContext, model: Served, params: ContextLimitParams) -> Window | None:
    given = _given(params)
    if given is not None:
        return given
    found = server_window(model.endpoint, ctx.case_end)
    if found is not None:
        return found
    served = ctx.load_info.details.get("served_file")  # a serve: model's folder
    return folder_window(Path(served)) if isinstance(served, str) else None


def _model_path(model: object) -> Path | None:
    """The folder an in-process model was loaded from (mlx-lm's model keeps it)."""
    path = getattr(model, "path", None)
    return path if isinstance(path, Path) else None


@dataclass(frozen=True)
class ContextLimitArtifacts(ScenarioArtifacts):
    """What a ``context_limit`` case records beside its metrics."""

    engine: str | None = None  # over HTTP: the server's engine (set by the scenario's wrapper)
    window_tokens: int | None = None
    window_source: str | None = None  # where the window came from
    window_detail: str | None = None
    require: str | None = None  # what past the window must do
    outcomes: dict[str, str] | None = None  # each probe's Outcome value, by Probe value
    probes: dict[str, str] | None = None  # each probe's line: what was sent, what came back
    finding: str | None = None  # a request past the window processed whole

    def outcome(self, probe: str) -> tuple[str | None, str | None]:
        """The outcome of ``probe`` and its line (None: not probed)."""
        return (self.outcomes or {}).get(probe), (self.probes or {}).get(probe)


SCENARIO = ContextLimit()
