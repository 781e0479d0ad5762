"""``http_prompt_cache``: does a server's prompt cache pay, and does it keep outputs identical?

Per run, three streamed greedy requests that share a long prefix of about ``prefix_tokens``
tokens (a fresh marker at its start each run, so the first request is a miss):
1. cold: prefix + question A;
2. warm: prefix + question B (the prefix can come from the cache);
3. again: prefix + question A (the whole prompt can come from the cache).

TTFT of each, the speed-up cold / warm, and the ``cached_tokens`` the server reports
(``usage.prompt_tokens_details.cached_tokens``: absent on servers that do not say). A cache hit
must not change the answer: request 3's text must equal request 1's, else the case fails with
both texts. When questions A and B get the same answer in every run, that equality proves
nothing: the case is not judged, and fails saying so. A server without a prompt cache, or one
that refuses a cache it cannot trust (``cached_tokens`` 0 on every warm request, the answers the
same), passes with a speed-up near 1 and the finding "no reuse" in its record: a figure, not a
failure, unless the suite sets ``require_reuse`` for that model.

``mode: probes`` asks instead the sequence of :mod:`harness.scenarios.http_prompt_cache.probes`
once, on a server started with a prompt cache of ``cache_entries`` entries: the order it evicts
in (the entry just used must survive) and a longer entry cut back to a prompt (the same answer
as cold), each check with its own verdict.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.backends.base import BackendCapability, Served
from harness.backends.openai_client import (
    StreamReply,
    request_failure,
    stream,
    sync_client,
    token_arrivals,
)
from harness.core.check_types import CheckStatus
from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
    metric,
)
from harness.scenarios.http_prompt_cache.probes import (
    ProbeFailed,
    order_verdict,
    probe_artifact,
    run_probes,
    trim_verdict,
)
from harness.scenarios.prompt_dependence import independence_line
from harness.scenarios.prompts import text_of_about

PREFIX = "http_prompt_cache"
COLD = MetricSpec(f"{PREFIX}.cold_ttft_s", Unit.SECONDS, False, "TTFT of a miss", noise_floor=0.05)
WARM = MetricSpec(
    f"{PREFIX}.warm_ttft_s", Unit.SECONDS, False, "TTFT with the prefix cached", noise_floor=0.05
)
AGAIN = MetricSpec(f"{PREFIX}.repeat_ttft_s", Unit.SECONDS, False, "TTFT of the same prompt again")
SPEEDUP = MetricSpec(f"{PREFIX}.speedup", Unit.RATIO, True, "cold TTFT / warm TTFT")
CACHED = MetricSpec(
    f"{PREFIX}.cached_tokens", Unit.TOKENS, True, "cached_tokens the server reports (warm)"
)
HIT = MetricSpec(
    f"{PREFIX}.hit_share", Unit.RATIO, True, "cached_tokens / prompt_tokens of the warm request"
)
PROBES_HELD = MetricSpec(
    f"{PREFIX}.probes_held", Unit.COUNT, True, "probes (mode: probes) that held, of 2"
)

QUESTION_A = "\n\nIn one sentence: what do the ships carry?"
QUESTION_B = "\n\nIn one sentence: where does the river run?"


ProbeName = Literal["lru_order", "longer_trimmed"]
PROBE_NAMES: tuple[ProbeName, ...] = ("lru_order", "longer_trimmed")


class HttpPromptCacheParams(Params):
    mode: Literal["reuse", "probes"] = Field(
        "reuse",
        description="reuse: cold, warm and repeated TTFT; probes: the cache's eviction order "
        "and a longer entry trimmed, once (see cache_entries)",
    )
    checks: list[ProbeName] = Field(
        default_factory=lambda: list(PROBE_NAMES),
        description="probes: the checks judged (both ride on one sequence of requests)",
    )
    cache_entries: int = Field(
        2,
        ge=2,
        description="probes: the entries the server's prompt cache holds (start it with as "
        "many: mlx_lm.server --prompt-cache-size)",
    )
    prefix_tokens: int = Field(512, ge=16, description="shared prefix length in tokens (about)")
    max_tokens: int = Field(16, ge=1, description="tokens per answer at most")
    require_reuse: bool = Field(
        False,
        description="fail when the server reuses nothing (cached_tokens 0 on every warm "
        "request); otherwise that is the finding 'no reuse'",
    )


def cached_tokens(usage: Mapping[str, Any]) -> int | None:
    details = usage.get("prompt_tokens_details")
    value = details.get("cached_tokens") if isinstance(details, Mapping) else None
    return value if isinstance(value, int) else None


def reuse_finding(cached: list[float]) -> str:
    """What the warm requests' ``cached_tokens`` say: reused, no reuse, or not reported."""
    if not cached:
        return "not reported: the server gives no usage.prompt_tokens_details.cached_tokens"
    if all(c <= 0 for c in cached):
        return f"no reuse: cached_tokens 0 in {len(cached)} of {len(cached)} warm requests"
    return f"reused: cached_tokens above 0 in {sum(c > 0 for c in cached)} of {len(cached)}"


class HttpPromptCache(BaseScenario[HttpPromptCacheParams]):
    name: ClassVar[str] = "http_prompt_cache"
    version: ClassVar[int] = 1
    params_model = HttpPromptCacheParams
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.HTTP})
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        COLD,
        WARM,
        AGAIN,
        SPEEDUP,
        CACHED,
        HIT,
        PROBES_HELD,
    )

    def workload(self, params: HttpPromptCacheParams) -> Workload:
        return Workload(params.prefix_tokens + 16, params.max_tokens)

    def run(self, ctx: ScenarioContext, params: HttpPromptCacheParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Served):
            return lacks(ctx, BackendCapability.HTTP)
        text = text_of_about(params.prefix_tokens, model.token_counter)
        if params.mode == "probes":
            return self._probes(ctx, model, text, params)
        samples: dict[MetricSpec, list[float]] = {spec: [] for spec in self.metrics}
        failures: list[str] = []
        blind = 0  # runs whose two questions got the same answer
        with sync_client(600.0) as client:
            for run in range(ctx.warmup + ctx.repeats):
                prefix = f"{secrets.token_hex(3)}: {text}"
                sent = [
                    stream(
                        client,
                        model.endpoint,
                        "/v1/completions",
                        self._body(prefix + q, params),
                        case_end=ctx.case_end,
                    )
                    for q in (QUESTION_A, QUESTION_B, QUESTION_A)
                ]
                broken = [r for r in sent if not r.ok or not r.content_chunks]
                if broken:
                    why = request_failure(broken[0])
                    return ScenarioOutput((), failures=(f"request failed: {why}",))
                cold, warm, again = sent
                blind += cold.content == warm.content
                if cold.content != again.content:
                    failures.append(
                        f"run {run + 1}: a cache hit changed the answer: cold {cold.content!r}, "
                        f"repeated {again.content!r}"
                    )
                if run >= ctx.warmup:
                    self._sample(samples, model, cold, warm, again)
        metrics = tuple(metric(spec, values) for spec, values in samples.items() if values)
        runs = ctx.warmup + ctx.repeats
        if not failures and blind == runs:
            failures.append(
                independence_line(
                    f"questions A and B after the same prefix got the same greedy text in {blind} "
                    f"of {runs} runs, so the repeated answer matching the cold one proves nothing"
                )
            )
        reuse = reuse_finding(samples[CACHED])
        if params.require_reuse and reuse.startswith("no reuse"):
            failures.append(f"{reuse}; the suite requires reuse (require_reuse)")
        artifacts = {"engine": model.engine, "reuse": reuse}
        return ScenarioOutput(metrics, artifacts, failures=tuple(failures))

    @staticmethod
    def _probes(
        ctx: ScenarioContext, model: Served, text: str, params: HttpPromptCacheParams
    ) -> ScenarioOutput:
        try:
            with sync_client(600.0) as client:
                run = run_probes(
                    client,
                    model,
                    (text, QUESTION_A, QUESTION_B),
                    cache_entries=params.cache_entries,
                    max_tokens=params.max_tokens,
                    case_end=ctx.case_end,
                )
        except ProbeFailed as failed:
            return ScenarioOutput((), failures=(str(failed),))
        verdicts = (order_verdict(run, params.cache_entries), trim_verdict(run))
        checks = tuple(c for c in verdicts if c.name in params.checks)
        failures = tuple(
            c.reason for c in checks if c.status in (CheckStatus.FAIL, CheckStatus.UNJUDGED)
        )
        held = sum(c.status is CheckStatus.PASS for c in checks)
        return ScenarioOutput(
            (metric(PROBES_HELD, [float(held)]),),
            {"engine": model.engine, "probes": probe_artifact(run)},
            failures=failures,
            checks=checks,
        )

    @staticmethod
    def _body(prompt: str, params: HttpPromptCacheParams) -> dict[str, Any]:
        return {"prompt": prompt, "max_tokens": params.max_tokens, "temperature": 0.0}

    @staticmethod
    def _sample(
        samples: dict[MetricSpec, list[float]],
        model: Served,
        cold: StreamReply,
        warm: StreamReply,
        again: StreamReply,
    ) -> None:
        ttfts = [token_arrivals(r.chunks, model.token_counter).ttft_s for r in (cold, warm, again)]
        for spec, value in zip((COLD, WARM, AGAIN), ttfts, strict=True):
            if value is not None:
                samples[spec].append(value)
        if ttfts[0] and ttfts[1]:
            samples[SPEEDUP].append(ttfts[0] / ttfts[1])
        cached = cached_tokens(warm.usage)
        prompt = warm.usage.get("prompt_tokens")
        if cached is not None:
            samples[CACHED].append(float(cached))
            if isinstance(prompt, int) and prompt > 0:
                samples[HIT].append(cached / prompt)


SCENARIO = HttpPromptCache()
