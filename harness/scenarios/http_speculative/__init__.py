"""``http_speculative``: speculative decoding over HTTP, on a server started with a draft model
(``serve: {engine: mlx_lm | llama_server, draft: {embedded: NAME}}``), judged like the
in-process ``speculative``: the draft must not change the greedy output.

Per run, the same streamed greedy request twice, side by side, the order alternating: as the
server serves it (drafted), and without the draft (the baseline: the same server with the draft
turned off for that one request, :mod:`harness.scenarios.http_speculative.draft` naming the
switch per engine, mlx_lm.server's ``num_draft_tokens: 0``; else a twin server, below). Then:

- the two texts must be identical: a difference fails the case, naming the first differing
  token (by the model's tokenizer) and both texts from there (escaped);
- acceptance = ``draft_n_accepted / draft_n`` from the server's ``timings`` (llama-server);
  a server that reports none (mlx_lm.server) gets none, and the record says so;
- decode tok/s of each, as ``http_throughput`` counts it (tokens after the first chunk over
  the first to the last chunk), and speed-up = drafted decode / baseline decode, same run
  (decode only: the second request of a pair may find the prompt in the server's cache);
- time to first token of each;
- where the two texts were compared and agreed, one more greedy request with another prompt:
  when it gets the same text, the agreement proves nothing (a model whose answer does not
  depend on its prompt) and the case fails with "not judged: ..." (issue 36's rule).

The two sides must differ by the draft alone: start the server without its prompt cache
(mlx_lm.server ``--prompt-cache-size 0``). With it on, the second request of a pair reuses the
first's prompt from the cache, and a cached prefill rounds differently from a cold one, which
can flip a near-tie greedy token (the zoo's random weights have many: seen on zoo/llama with
mlx-lm 0.32.2, 1 run in 6) and would be blamed on the draft.

A server whose engine has no per-request switch (llama-server) gets a twin for its baseline
(``twin``, :mod:`harness.backends.server_twin`): a second server of the same files and
arguments without the draft, started for the case and stopped after it, each run's two
requests going one to each. Without either (a ``url:`` server and no ``baseline_body``) the
drafted figures and acceptance are recorded, the comparison is left out, and ``baseline``
says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pydantic import Field

from harness.backends.base import BackendCapability, BackendError, Served
from harness.backends.openai_client import (
    Endpoint,
    StreamReply,
    generation_body,
    request_failure,
    stream,
    sync_client,
    token_arrivals,
)
from harness.backends.server_twin import twin_problem, undrafted_twin
from harness.core.metrics import MetricSpec
from harness.core.types import Metric, Unit
from harness.probe.types import ReasonCode
from harness.scenarios.base import (
    BaseScenario,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
)
from harness.scenarios.draft_checks import Acceptance
from harness.scenarios.http_speculative.draft import (
    TextMismatch,
    draft_off,
    mismatch_line,
    ratio,
    server_acceptance,
    text_mismatch,
    why_no_baseline,
)
from harness.scenarios.prompt_dependence import independence_line
from harness.scenarios.prompts import PromptSource, text_of_about

REQUEST_TIMEOUT_S = 600.0
PREFIX = "http_speculative"
DECODE = MetricSpec(
    f"{PREFIX}.decode_tps", Unit.TOKENS_PER_SECOND, True, "decode tokens/s with the draft"
)
BASELINE_DECODE = MetricSpec(
    f"{PREFIX}.baseline_decode_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "decode tokens/s of the same server with the draft off for the request, same run",
)
SPEEDUP = MetricSpec(
    f"{PREFIX}.speedup", Unit.RATIO, True, "decode tokens/s with the draft / without, per run"
)
ACCEPTANCE = MetricSpec(
    f"{PREFIX}.acceptance",
    Unit.RATIO,
    True,
    "draft tokens accepted / drafted, per request, as the server reports it (llama-server)",
    noise_floor=0.01,
)
TTFT = MetricSpec(
    f"{PREFIX}.ttft_s", Unit.SECONDS, False, "time to first token with the draft", noise_floor=0.05
)
BASELINE_TTFT = MetricSpec(
    f"{PREFIX}.baseline_ttft_s",
    Unit.SECONDS,
    False,
    "time to first token with the draft off",
    noise_floor=0.05,
)


class HttpSpeculativeParams(PromptSource):
    """``prompt_tokens`` go to /v1/completions as plain text, ``prompts`` to
    /v1/chat/completions."""

    gen_tokens: int = Field(32, ge=2, description="tokens to ask for (max_tokens)")
    ignore_eos: bool = Field(
        True, description="ask the server to keep going past EOS (llama-server's ignore_eos)"
    )
    twin: bool = Field(
        True,
        description="without a per-request switch (llama-server), start a second server of the "
        "same files without the draft for the baseline",
    )
    baseline_body: dict[str, Any] | None = Field(
        None,
        description="request fields that turn the server's draft off for one request; unset: "
        "the engine's own (mlx_lm.server: num_draft_tokens: 0; llama-server has none)",
    )


@dataclass(frozen=True)
class Baseline:
    """Where the baseline requests go, and the fields that turn the draft off there."""

    endpoint: Endpoint
    fields: Mapping[str, Any]


@dataclass(frozen=True)
class Side:
    """One streamed request as the client saw it."""

    text: str
    ttft_s: float | None
    decode_tps: float | None
    acceptance: Acceptance | None
    tokens: int  # by the tokenizer (or one a chunk)


def side(reply: StreamReply, model: Served) -> Side:
    arrivals = token_arrivals(reply.chunks, model.token_counter)
    return Side(
        reply.content,
        arrivals.ttft_s,
        arrivals.decode_tps(),
        server_acceptance(reply.timings),
        arrivals.tokens,
    )


OTHER_TOPIC = "A different request entirely, about mountains and snow. "


def other_prompt(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with another prompt: its text (or its last message's) after another topic."""
    if isinstance(body.get("prompt"), str):
        return {**body, "prompt": OTHER_TOPIC + body["prompt"]}
    messages = [dict(m) for m in body.get("messages") or []]
    if messages and isinstance(messages[-1].get("content"), str):
        messages[-1]["content"] = OTHER_TOPIC + messages[-1]["content"]
    return {**body, "messages": messages}


@dataclass(frozen=True)
class Pair:
    """One run: the drafted request and, where the server can turn its draft off, the
    baseline."""

    drafted: Side
    baseline: Side | None
    mismatch: TextMismatch | None

    def figures(self) -> dict[str, float | None]:
        base = self.baseline
        return {
            DECODE.name: self.drafted.decode_tps,
            TTFT.name: self.drafted.ttft_s,
            ACCEPTANCE.name: self.drafted.acceptance.rate if self.drafted.acceptance else None,
            BASELINE_DECODE.name: base.decode_tps if base else None,
            BASELINE_TTFT.name: base.ttft_s if base else None,
            SPEEDUP.name: ratio(self.drafted.decode_tps, base.decode_tps) if base else None,
        }


class HttpSpeculative(BaseScenario[HttpSpeculativeParams]):
    name: ClassVar[str] = "http_speculative"
    version: ClassVar[int] = 1
    params_model = HttpSpeculativeParams
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.HTTP})
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        DECODE,
        BASELINE_DECODE,
        SPEEDUP,
        ACCEPTANCE,
        TTFT,
        BASELINE_TTFT,
    )

    def workload(self, params: HttpSpeculativeParams) -> Workload:
        return Workload(params.text_tokens, params.gen_tokens)

    def run(self, ctx: ScenarioContext, params: HttpSpeculativeParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Served):
            return lacks(ctx, BackendCapability.HTTP)
        draft = ctx.load_info.details.get("server_draft")
        if model.engine != "url" and draft is None:
            return ScenarioOutput(
                (),
                skip_reason=f"{ReasonCode.CAPABILITY_MISMATCH.value}: the server was started "
                "without a draft model; give serve: {draft: {embedded: NAME}}",
            )
        artifacts: dict[str, object] = {"engine": model.engine, "draft": draft}
        switch = draft_off(model.engine, params.baseline_body)
        if switch is not None:
            artifacts["baseline"] = {"same server, per request": dict(switch)}
            return self._measure(ctx, model, params, artifacts, Baseline(model.endpoint, switch))
        why_not = twin_problem(ctx.load_info.details) if params.twin else "params.twin is false"
        if why_not is not None:
            artifacts["baseline"] = f"none: {why_no_baseline(model.engine)}; no twin: {why_not}"
            return self._measure(ctx, model, params, artifacts, None)
        artifacts["baseline"] = (
            f"a second {model.engine} of the same files without the draft (its engine has no "
            "per-request switch)"
        )
        try:
            with undrafted_twin(ctx.load_info.details) as twin:
                return self._measure(ctx, model, params, artifacts, Baseline(twin, {}))
        except BackendError as exc:
            return ScenarioOutput((), artifacts, failures=(f"the baseline twin: {exc}",))

    def _measure(
        self,
        ctx: ScenarioContext,
        model: Served,
        params: HttpSpeculativeParams,
        artifacts: dict[str, object],
        target: Baseline | None,
    ) -> ScenarioOutput:
        pairs: list[Pair] = []
        with sync_client(REQUEST_TIMEOUT_S) as client:

            def send(endpoint: Endpoint, body: Mapping[str, Any], path: str) -> StreamReply:
                return stream(client, endpoint, path, body, case_end=ctx.case_end)

            for index in range(ctx.warmup + ctx.repeats):
                path, body = self._request(model, params, index)
                drafted: StreamReply | None = None
                baseline: StreamReply | None = None
                if target is not None and index % 2 == 1:  # the order alternates run to run
                    baseline = send(target.endpoint, {**body, **target.fields}, path)
                    drafted = send(model.endpoint, body, path) if baseline.ok else None
                else:
                    drafted = send(model.endpoint, body, path)
                    if target is not None and drafted.ok:
                        baseline = send(target.endpoint, {**body, **target.fields}, path)
                broken = next((r for r in (drafted, baseline) if r and not r.ok), None)
                if broken is not None or drafted is None:
                    why = request_failure(broken) if broken else "no drafted request"
                    return ScenarioOutput((), artifacts, failures=(f"run {index + 1}: {why}",))
                pair = self._pair(model, drafted, baseline)
                pairs.append(pair)
                ctx.run_done(pair.drafted.tokens + (pair.baseline.tokens if pair.baseline else 0))
            blind = None
            if target is not None and pairs and not any(p.mismatch for p in pairs):
                path, body = self._request(model, params, 0)
                other = send(model.endpoint, other_prompt(body), path)
                if other.ok and other.content == pairs[0].drafted.text:
                    blind = independence_line(
                        f"a different prompt got the same greedy text ({len(other.content)} "
                        "characters), so the drafted text matching the undrafted one proves "
                        "nothing"
                    )
        out = self._output(model, pairs[ctx.warmup :], pairs, artifacts)
        if blind is not None:
            out = replace(out, failures=(*out.failures, blind))
        return out

    @staticmethod
    def _request(
        model: Served, params: HttpSpeculativeParams, index: int
    ) -> tuple[str, dict[str, Any]]:
        if params.prompts is not None:
            text = params.prompts[index % len(params.prompts)]
            endpoint = "chat"
        else:
            text = text_of_about(params.text_tokens, model.token_counter)
            endpoint = "completions"
        body = generation_body(
            endpoint, text, max_tokens=params.gen_tokens, ignore_eos=params.ignore_eos
        )
        return f"/v1/{'chat/' if endpoint == 'chat' else ''}completions", body

    @staticmethod
    def _pair(model: Served, drafted: StreamReply, baseline: StreamReply | None) -> Pair:
        ours = side(drafted, model)
        base = side(baseline, model) if baseline is not None else None
        found = text_mismatch(base.text, ours.text, model.token_counter) if base else None
        return Pair(ours, base, found)

    @staticmethod
    def _output(
        model: Served, measured: list[Pair], runs: list[Pair], artifacts: dict[str, object]
    ) -> ScenarioOutput:
        metrics: list[Metric] = []
        for spec in HttpSpeculative.metrics:
            values = [p.figures()[spec.name] for p in measured]
            kept = tuple(float(v) for v in values if v is not None and v == v)
            if kept:
                metrics.append(Metric(spec.name, spec.unit, kept))
        told = [p.drafted.acceptance for p in measured]
        artifacts["acceptance_source"] = (
            "server timings (draft_n_accepted / draft_n)"
            if any(told)
            else f"unknown: {model.engine} reports nothing of its draft"
        )
        artifacts["accepted_tokens"] = [a.accepted if a else None for a in told]
        artifacts["drafted_tokens"] = [a.drafted if a else None for a in told]
        artifacts["generated_tokens"] = [p.drafted.tokens for p in measured]
        broken = [(i, p.mismatch) for i, p in enumerate(runs) if p.mismatch]
        artifacts["first_mismatch"] = (
            {"run": broken[0][0] + 1, **vars(broken[0][1])} if broken else None
        )
        failures: tuple[str, ...] = ()
        if broken:
            index, found = broken[0]
            assert found is not None
            failures = (mismatch_line(found, index + 1, len(broken), len(runs)),)
        return ScenarioOutput(tuple(metrics), artifacts, failures=failures)


SCENARIO = HttpSpeculative()
