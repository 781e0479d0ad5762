"""``cancellation``: a client cancels a streamed answer mid-way. Does the server stop producing
tokens, how soon, and is the next answer unchanged?

Per case: a short greedy request (the *answer*, ``answer_max_tokens``) is asked cold, then warm
(the *control*) and twice more (its idle times); a long one (``long_max_tokens``, past EOS) is
streamed whole once (the *known load*: how many seconds its tokens take). Then ``cancels``
times: the long request again, the client hanging up after ``hang_up_after_chunks`` events; the
time until the server stops (:mod:`harness.scenarios.cancellation.watch`: its counters where it
has them, llama-server's ``/metrics`` or ``/slots``, else the CPU time of a server on this
machine, else the answer's own times as probes); and
the answer asked once more, compared with the warm control: never with the cold first answer
(a server may answer from its cache a little differently than cold: drift, not corruption; it
is named when it shows).

Two checks, each with its verdict: ``stops`` (every cancel stopped within ``max_stop_s``;
not judged when the abandoned answer had no more than that left anyway) and ``next_answer``
(every answer after a cancel equals the warm control). The answers must depend on the prompt
for the second to be able to fail: a content-bearing model (the zoo's) or a real one.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.backends.base import BackendCapability, Served, ServerMemory
from harness.backends.openai_client import (
    ENDPOINT_PATHS,
    StreamReply,
    generation_body,
    stream,
    sync_client,
    token_arrivals,
)
from harness.backends.proc_cpu import cpu_seconds
from harness.backends.server_counters import read_activity
from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.metrics import MetricSpec
from harness.core.types import Metric, Unit
from harness.scenarios.base import BaseScenario, Params, ScenarioContext, ScenarioOutput, lacks
from harness.scenarios.cancellation.watch import (
    CpuRates,
    Probe,
    idle_bound_s,
    watch_counters,
    watch_cpu,
    watch_probes,
)
from harness.scenarios.parting import differ_at
from harness.scenarios.prompts import numbered, text_of_about
from harness.scenarios.streams.artifacts import reply_error

ANSWER_TEXT = "Tell the story of a long voyage across the northern sea, and name the ship."
REQUEST_TIMEOUT_S = 300.0
CPU_WINDOW_S = 0.1  # the server's CPU use is judged over windows this long
IDLE_CPU_S = 0.5  # its CPU use at idle measured over this
IDLE_PROBES = 5  # the control and four more: the answer's times at idle

STOP_S = MetricSpec(
    "cancellation.stop_s",
    Unit.SECONDS,
    False,
    "time from a client's hang-up until the server stopped producing tokens",
    noise_floor=0.1,
)
DECODED_AFTER = MetricSpec(
    "cancellation.decoded_after_cancel",
    Unit.COUNT,
    False,
    "decode steps the server ran after a hang-up (its counters)",
    noise_floor=0.0,
)
CHANGED = MetricSpec(
    "cancellation.changed_answers",
    Unit.COUNT,
    False,
    "answers after a cancel that differ from the warm control",
    noise_floor=0.0,
)


class CancellationParams(Params):
    prompt_tokens: int = Field(64, ge=8, description="the cancelled request's prompt (about)")
    long_max_tokens: int = Field(
        1024, ge=16, description="tokens the cancelled request asks for (past EOS)"
    )
    answer_max_tokens: int = Field(
        32, ge=1, description="tokens of the answer compared before and after a cancel"
    )
    hang_up_after_chunks: int = Field(3, ge=1, description="stream events read before hanging up")
    cancels: int = Field(3, ge=1, le=50, description="cancels per case")
    max_stop_s: float = Field(
        1.0,
        gt=0,
        description="a server must stop within this after a hang-up",
        json_schema_extra={"unit": "s"},
    )
    max_watch_s: float = Field(
        60.0,
        gt=0,
        le=3600,
        description="the longest a cancel is watched for the server to stop",
        json_schema_extra={"unit": "s"},
    )
    poll_s: float = Field(
        0.02, gt=0, le=5, description="counters polled this often", json_schema_extra={"unit": "s"}
    )
    endpoint: Literal["chat", "completions"] = Field(
        "chat", description="chat: one user turn, templated; completions: the raw text"
    )


class _Talk:
    """One case's requests to the served model, on one client."""

    def __init__(self, model: Served, params: CancellationParams, client: Any) -> None:
        self.model = model
        self.params = params
        self.client = client
        self.path = ENDPOINT_PATHS[params.endpoint]
        marker = secrets.token_hex(3)
        counter = model.token_counter
        self.answer_body = generation_body(
            params.endpoint, numbered(marker, 0, ANSWER_TEXT), max_tokens=params.answer_max_tokens
        )
        long_text = text_of_about(max(params.prompt_tokens - 4, 1), counter)
        self.long_body = generation_body(
            params.endpoint,
            numbered(marker, 1, long_text),
            max_tokens=params.long_max_tokens,
            ignore_eos=True,
        )

    def answer(self) -> StreamReply:
        return stream(self.client, self.model.endpoint, self.path, self.answer_body)

    def long(self, hang_up_after: int | None = None) -> StreamReply:
        return stream(
            self.client,
            self.model.endpoint,
            self.path,
            self.long_body,
            stop_after_chunks=hang_up_after,
        )

    def tokens(self, reply: StreamReply) -> int:
        return token_arrivals(reply.chunks, self.model.token_counter).tokens


def cancels(n: int) -> str:
    return f"{n} cancel" + ("" if n == 1 else "s")


def _known_rate(talk: _Talk, reply: StreamReply) -> float | None:
    """Tokens/s of the long request streamed whole (after its first chunk)."""
    return token_arrivals(reply.chunks, talk.model.token_counter).decode_tps()


@dataclass(frozen=True)
class Route:
    """How a case sees the server stop: its counters (``counters``: the path that answered),
    else its CPU time (``pids`` with their ``cpu`` rates), else probes."""

    counters: str | None = None
    pids: tuple[int, ...] = ()
    cpu: CpuRates | None = None

    @property
    def label(self) -> str:
        if self.counters is not None:
            return f"counters {self.counters}"
        if self.cpu is not None:
            return "server CPU time"
        return "probes"


def _trial(
    talk: _Talk,
    control: StreamReply,
    baseline_s: list[float],
    known: tuple[int, float | None],
    route: Route,
) -> dict[str, Any]:
    """One cancel: hang up, watch the server stop, ask the answer again."""
    p = talk.params
    cut = talk.long(p.hang_up_after_chunks)
    hung_up_at = time.perf_counter()
    received = talk.tokens(cut)
    known_tokens, rate = known  # the whole answer's tokens, counted as ``received`` is
    remaining_s = max(known_tokens - received, 0) / rate if rate else None
    watch_s = p.max_watch_s
    if remaining_s is not None:
        watch_s = min(watch_s, max(remaining_s * 1.5 + 2.0, p.max_stop_s * 2))
    answers: list[StreamReply] = []  # every answer asked after the hang-up, in order
    probes: tuple[Probe, ...] = ()
    if route.counters is not None:
        source = route.counters

        def read() -> Any:
            return read_activity(talk.client, talk.model.endpoint, source)

        stop = watch_counters(read, hung_up_at, watch_s, p.poll_s)
        resolution_s = p.poll_s
    elif route.cpu is not None:
        pids = route.pids
        stop = watch_cpu(lambda: cpu_seconds(pids), hung_up_at, route.cpu, watch_s, CPU_WINDOW_S)
        resolution_s = CPU_WINDOW_S
    else:

        def probe() -> float | None:
            reply = talk.answer()
            answers.append(reply)
            return reply.elapsed_s if reply.ok else None

        resolution_s = idle_bound_s(baseline_s)  # a probe's time: when it stopped within it
        stop, probes = watch_probes(probe, hung_up_at, resolution_s, watch_s)
    answers.append(talk.answer())  # once the server stopped: what it left behind shows here
    failed = next((r for r in answers if not r.ok), None)
    changed = next((r for r in answers if r.ok and r.content != control.content), None)
    return {
        "cut_done": cut.done,
        "cut_error": None if cut.hung_up or cut.done else reply_error(cut),
        "received_tokens": received,
        "remaining_s": None if remaining_s is None else round(remaining_s, 4),
        "stop_s": None if stop.stop_s is None else round(stop.stop_s, 4),
        "how": stop.how,
        "resolution_s": round(resolution_s, 4),
        "decoded_after": stop.decoded_after,
        # what the stop time is in tokens at the known load's pace (without counters)
        "tokens_after_est": None
        if stop.stop_s is None or not rate
        else round(stop.stop_s * rate, 1),
        "probes": stop.probes,
        "probe_e2e_s": [None if q.e2e_s is None else round(q.e2e_s, 4) for q in probes][:50],
        "watched_s": round(stop.watched_s, 4),
        "answers_after": len(answers),
        "after_error": None if failed is None else reply_error(failed),
        "after_same": failed is None and changed is None,
        "after_differs": None if changed is None else differ_at(changed.content, control.content),
    }


def stops_verdict(trials: list[dict[str, Any]], max_stop_s: float) -> CheckVerdict:
    """``stops``: every cancel stopped within ``max_stop_s``; not judged when none could show
    a server that kept on (the abandoned answer had at most that long left)."""
    name = "stops"
    broken = [t for t in trials if t["cut_error"] is not None]
    if broken:
        reason = f"the request to cancel failed before the hang-up: {broken[0]['cut_error']}"
        return CheckVerdict(name, CheckStatus.FAIL, reason)
    judged = [t for t in trials if not t["cut_done"]]
    if not judged:
        return CheckVerdict(
            name, CheckStatus.UNJUDGED, "every long stream ended before the client hung up"
        )
    late = [
        t
        for t in judged
        if t["stop_s"] is None or t["stop_s"] > max_stop_s + t.get("resolution_s", 0.0)
    ]
    if late:
        worst = late[0]
        left = worst["remaining_s"]
        had = f"; it had about {left:.2f} s of tokens left" if left is not None else ""
        if worst["stop_s"] is None:
            said = f"had not stopped {worst['watched_s']:.1f} s after the client hung up"
        else:
            said = f"kept generating {worst['stop_s']:.2f} s after the client hung up"
        seen = f" ({worst['how']}, to within {worst.get('resolution_s', 0.0):.2f} s"
        if worst["decoded_after"] is not None:
            seen += f", {worst['decoded_after']} decode steps after the hang-up"
        reason = (
            f"{len(late)} of {cancels(len(judged))}: the server {said}{seen}){had}; "
            f"bound {max_stop_s:g} s"
        )
        return CheckVerdict(name, CheckStatus.FAIL, reason)
    could_show = [t for t in judged if (t["remaining_s"] or 0.0) > max_stop_s]
    worst_s = max(t["stop_s"] for t in judged)
    if not could_show:
        left = max((t["remaining_s"] or 0.0) for t in judged)
        reason = (
            f"stopped within {worst_s:.2f} s, but the cancelled answers had at most {left:.2f} s "
            f"left (bound {max_stop_s:g} s): raise long_max_tokens so a server that kept on "
            "would show"
        )
        return CheckVerdict(name, CheckStatus.UNJUDGED, reason)
    how = judged[0]["how"]
    reason = f"{cancels(len(judged))}: stopped within {worst_s:.2f} s of the hang-up ({how})"
    return CheckVerdict(name, CheckStatus.PASS, reason)


def next_answer_verdict(trials: list[dict[str, Any]], drift: str) -> CheckVerdict:
    """``next_answer``: every answer after a cancel equals the warm control."""
    name = "next_answer"
    failed = [t for t in trials if t["after_error"] is not None]
    if failed:
        reason = f"the request after a cancel failed: {failed[0]['after_error']}"
        return CheckVerdict(name, CheckStatus.FAIL, reason)
    changed = [t for t in trials if not t["after_same"]]
    if changed:
        reason = (
            f"{len(changed)} of {cancels(len(trials))}: the same greedy request after it and its "
            f"warm control {changed[0]['after_differs']}{drift}"
        )
        return CheckVerdict(name, CheckStatus.FAIL, reason)
    asked = sum(t["answers_after"] for t in trials)
    reason = f"{cancels(len(trials))}: every answer after them ({asked}) equals the warm control"
    return CheckVerdict(name, CheckStatus.PASS, reason + drift)


def _server_pids(model: Served) -> tuple[int, ...]:
    memory = model.server_memory()
    return memory.pids if isinstance(memory, ServerMemory) else ()


def _cpu_rate(pids: tuple[int, ...], action: Callable[[], object]) -> float | None:
    """CPU seconds a second the server used while ``action`` ran."""
    began, used = time.perf_counter(), cpu_seconds(pids)
    action()
    after = cpu_seconds(pids)
    if used is None or after is None:
        return None
    return (after - used) / max(time.perf_counter() - began, 1e-9)


def _route(talk: _Talk, pids: tuple[int, ...], busy: float | None) -> Route:
    """Counters where the server has them, else its CPU time where it shows generation (the
    idle rate measured now), else probes."""
    found = read_activity(talk.client, talk.model.endpoint)
    if found is not None:
        return Route(counters=found.source)
    if not pids or busy is None:
        return Route()
    idle = _cpu_rate(pids, lambda: time.sleep(IDLE_CPU_S))
    if idle is None:
        return Route()
    rates = CpuRates(idle, busy)
    return Route(pids=pids, cpu=rates) if rates.usable else Route()


class Cancellation(BaseScenario[CancellationParams]):
    name: ClassVar[str] = "cancellation"
    version: ClassVar[int] = 1
    params_model = CancellationParams
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.HTTP})
    repeats_apply: ClassVar[bool] = False  # its samples are its cancels
    samples_from: ClassVar[str] = "cancels"
    metrics: ClassVar[tuple[MetricSpec, ...]] = (STOP_S, DECODED_AFTER, CHANGED)
    headline_metrics: ClassVar[tuple[str, ...]] = (STOP_S.name,)

    def run(self, ctx: ScenarioContext, params: CancellationParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Served):
            return lacks(ctx, BackendCapability.HTTP)
        with sync_client(REQUEST_TIMEOUT_S) as client:
            return _run(_Talk(model, params, client), params)


def _first_failure(replies: list[tuple[str, StreamReply]]) -> str | None:
    for label, reply in replies:
        why = reply_error(reply)
        if why is not None:
            return f"the {label} failed: {why}"
    return None


def _run(talk: _Talk, params: CancellationParams) -> ScenarioOutput:
    cold = talk.answer()
    idle = [talk.answer() for _ in range(IDLE_PROBES)]
    control = idle[0]
    pids = _server_pids(talk.model)
    replies: list[StreamReply] = []
    busy = _cpu_rate(pids, lambda: replies.append(talk.long())) if pids else None
    known = replies[0] if replies else talk.long()
    failure = _first_failure(
        [("cold answer", cold), *(("warm answer", r) for r in idle), ("long request", known)]
    )
    if failure is not None:
        return ScenarioOutput((), {"engine": talk.model.engine}, failures=(failure,))
    baseline_s = [r.elapsed_s for r in idle]
    rate = _known_rate(talk, known)
    route = _route(talk, pids, busy)
    known_load = (talk.tokens(known), rate)
    trials = [_trial(talk, control, baseline_s, known_load, route) for _ in range(params.cancels)]
    drift = ""
    if control.content != cold.content:
        drift = (
            f" (its warm and cold answers {differ_at(control.content, cold.content)}: "
            "not a cancel's doing)"
        )
    checks = (stops_verdict(trials, params.max_stop_s), next_answer_verdict(trials, drift))
    stops = [t["stop_s"] for t in trials if t["stop_s"] is not None and not t["cut_done"]]
    decoded = [float(t["decoded_after"]) for t in trials if t["decoded_after"] is not None]
    metrics = [
        Metric(CHANGED.name, CHANGED.unit, (float(sum(not t["after_same"] for t in trials)),))
    ]
    if stops:
        metrics.insert(0, Metric(STOP_S.name, STOP_S.unit, tuple(stops)))
    if decoded:
        metrics.append(Metric(DECODED_AFTER.name, DECODED_AFTER.unit, tuple(decoded)))
    artifacts = {
        "engine": talk.model.engine,
        "endpoint": params.endpoint,
        "route": route.label,
        "cpu_rates": None
        if route.cpu is None
        else {"idle": round(route.cpu.idle, 4), "busy": round(route.cpu.busy, 4)},
        "idle_e2e_s": [round(s, 4) for s in baseline_s],
        "idle_bound_s": round(idle_bound_s(baseline_s), 4),
        "known_load": {
            "tokens": talk.tokens(known),
            "seconds": round(known.elapsed_s, 4),
            "tokens_per_s": None if rate is None else round(rate, 2),
        },
        "max_stop_s": params.max_stop_s,
        "cold_warm_drift": drift.strip(" ()") or None,
        "trials": trials,
        "checks": [{"name": c.name, "status": c.status.value, "reason": c.reason} for c in checks],
    }
    failures = tuple(f"{c.name}: {c.reason}" for c in checks if c.status is CheckStatus.FAIL)
    return ScenarioOutput(tuple(metrics), artifacts, failures=failures, checks=checks)


SCENARIO = Cancellation()
