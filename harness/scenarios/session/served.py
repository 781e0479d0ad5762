"""A session replayed against a server, as an agent client sends it: the whole conversation on
every turn to ``/v1/chat/completions`` (streamed, greedy, with the session's tools).

What the server says it took from its cache is ``cached_tokens``: llama-server's ``timings``
(``cache_n``), else usage's ``prompt_tokens_details.cached_tokens`` (mlx_lm.server); a server
that says neither leaves the reuse unknown. What it could have taken is the previous turn's
prompt (as the server counted it): the conversation only grows. A chat template that renders
the earlier turns differently on the next one (Qwen3's dropped ``<think>`` blocks) makes that
less; the in-process case on the same files names the token where it happens.

Answers with and without the cache are compared against a :class:`Reference`: the same server
told to skip its cache for that request where the engine can (llama-server: ``cache_prompt:
false``), else a twin server of the same files that keeps no cache, started by the case
(:mod:`harness.backends.server_twin`: mlx_lm.server with ``--prompt-cache-size 0``; mlx_vlm.server
without its ``APC_ENABLED``); a server the harness did not start (``url:``) has no twin, so its
turns say "not checked" rather than pass.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.backends.base import Served
from harness.backends.openai_client import Endpoint, StreamReply, request_failure, stream
from harness.core.visible_text import visible
from harness.scenarios.prefix import common_prefix
from harness.scenarios.server_timings import cached_tokens, read_timings
from harness.scenarios.session.reuse import TurnResult, TurnReuse
from harness.scenarios.session.script import Session

if TYPE_CHECKING:
    import httpx

CHAT = "/v1/chat/completions"


class TurnFailed(Exception):
    """A request of the session got no answer: one line."""


class OutOfTime(Exception):
    """The case's time limit came before the session's end: one line."""


@dataclass(frozen=True)
class Reference:
    """Where a turn is answered without the prompt cache: an endpoint and the request fields
    that say so; ``label`` for the record."""

    endpoint: Endpoint
    label: str
    fields: Mapping[str, Any] = field(default_factory=dict)


def no_cache_fields(engine: str) -> Mapping[str, Any] | None:
    """The request fields that make ``engine`` answer one request without its prompt cache
    (None: it has none)."""
    return {"cache_prompt": False} if engine.startswith("llama-server") else None


def twin_args(server_engine: str) -> list[str] | None:
    """The extra arguments of a twin of a ``server_engine`` (the load's record) that keeps no
    prompt cache (None: no twin makes one)."""
    return {"mlx_lm": ["--prompt-cache-size", "0"], "mlx_vlm": []}.get(server_engine)


def first_token_s(reply: StreamReply) -> float | None:
    """When the first chunk carrying anything generated arrived: text, reasoning or a tool
    call (an agent's turn is often a call alone)."""
    for chunk in reply.chunks:
        if chunk.text or chunk.reasoning or chunk.delta.get("tool_calls"):
            return chunk.t_s
    return None


def decode_tps(reply: StreamReply, ttft_s: float | None) -> float | None:
    """Completion tokens after the first over the time from the first to the last chunk."""
    completion = reply.usage.get("completion_tokens")
    last = reply.chunks[-1].t_s if reply.chunks else None
    if not isinstance(completion, int) or completion < 2 or ttft_s is None or last is None:
        return None
    span = last - ttft_s
    return (completion - 1) / span if span > 0 else None


def answer_of(reply: StreamReply) -> str:
    """The whole answer as one text: reasoning, content and tool calls."""
    calls = json.dumps(reply.tool_calls, ensure_ascii=False) if reply.tool_calls else ""
    return reply.reasoning + reply.content + calls


def prompt_tokens(reply: StreamReply) -> int | None:
    timings = read_timings(reply.timings)
    if timings is not None and timings.cached_tokens is not None:
        return timings.prompt_tokens + timings.cached_tokens
    value = reply.usage.get("prompt_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class ServedReplay:
    """One replay of ``session`` against ``model``'s server."""

    def __init__(
        self,
        model: Served,
        session: Session,
        client: httpx.Client,
        *,
        max_tokens: int,
        reference: Reference | None,
        case_end: float | None,
    ) -> None:
        self.model = model
        self.session = session
        self.client = client
        self.max_tokens = max_tokens
        self.reference = reference
        self.case_end = case_end
        self.previous_prompt = 0

    def _cold(self, turn: int) -> StreamReply:
        assert self.reference is not None
        return self._send(turn, self.reference.fields, self.reference.endpoint)

    def _send(
        self, turn: int, extra: Mapping[str, Any] | None = None, endpoint: Endpoint | None = None
    ) -> StreamReply:
        body: dict[str, Any] = {
            "messages": self.session.prompt(turn),
            "max_tokens": self.max_tokens,
            "temperature": 0.0,
        }
        if self.session.tools:
            body["tools"] = list(self.session.tools)
        body.update(extra or {})
        where = endpoint or self.model.endpoint
        reply = stream(self.client, where, CHAT, body, case_end=self.case_end)
        if not reply.ok:
            line = f"turn {turn + 1}: {request_failure(reply, 'chat')}"
            raise OutOfTime(line) if reply.out_of_case_time else TurnFailed(line)
        return reply

    def turn(self, turn: int, cold_first: bool) -> TurnResult:
        # the same server answering without its cache still leaves that answer in its slot:
        # the turn itself goes first there, so what it reuses is what the last turn left
        same_server = self.reference is not None and self.reference.endpoint == self.model.endpoint
        cold_first = cold_first and not same_server
        cold = self._cold(turn) if self.reference and cold_first else None
        warm = self._send(turn)
        if self.reference and cold is None:
            cold = self._cold(turn)
        total = prompt_tokens(warm)
        reused = cached_tokens(read_timings(warm.timings), warm.usage)
        prompt = total if total is not None else 0
        reusable = min(self.previous_prompt, max(prompt - 1, 0))
        self.previous_prompt = prompt
        ttft = first_token_s(warm)
        identical = differs = None
        if cold is not None:
            identical = answer_of(warm) == answer_of(cold)
            differs = None if identical else _parting(answer_of(warm), answer_of(cold))
        return TurnResult(
            turn=turn + 1,
            kind=self.session.turn_kind(turn),
            reuse=TurnReuse(prompt, reusable, reused),
            ttft_s=ttft,
            decode_tps=decode_tps(warm, ttft),
            answer=answer_of(warm),
            cold_ttft_s=first_token_s(cold) if cold is not None else None,
            identical=identical,
            differs_at=differs,
            miss_reason=None if reused is not None else "the server reports no cached tokens",
        )


def _parting(with_cache: str, without: str) -> str:
    at = common_prefix(with_cache, without)
    return (
        f"character {at}: with the cache {visible(with_cache[at : at + 30], 30)!r}, without "
        f"it {visible(without[at : at + 30], 30)!r}"
    )
