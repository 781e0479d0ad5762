"""Replay a trace on its timestamps: each request sent at its arrival time divided by
``speedup``, whatever is in flight (the serving scenario's open loop), on one event loop.

A session's turn is sent at its time, but not before the turn before it has its answer (its
prompt holds that answer): the wait is recorded apart (``session_wait_s``), never as a late
dispatch. How faithful the replay was is measured, not assumed: each request's dispatch lag
(sent minus due, in seconds) shows an event loop or a client that could not keep to the
timestamps.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from harness.backends.openai_client import ENDPOINT_PATHS, Endpoint, StreamReply, astream
from harness.scenarios.streams.loop import LoopRun, open_loop
from harness.scenarios.trace_replay.prompts import PromptBook, Turn, chat_messages, with_history
from harness.scenarios.trace_replay.trace import TraceRequest


@dataclass(frozen=True)
class Replied:
    """One replayed request: the reply, and how long it waited for its session's turn before."""

    reply: StreamReply
    session_wait_s: float


@dataclass(frozen=True)
class ReplayPlan:
    """What one replay sends: the requests, their offsets (seconds after the start) and texts."""

    requests: tuple[TraceRequest, ...]
    offsets: tuple[float, ...]
    own_texts: tuple[str, ...]
    endpoint: str
    ignore_eos: bool


def plan_replay(
    requests: Sequence[TraceRequest],
    book: PromptBook,
    *,
    speedup: float,
    endpoint: str,
    ignore_eos: bool,
) -> ReplayPlan:
    """Offsets scaled by ``speedup`` (2: twice as fast) and every request's own text, made now."""
    return ReplayPlan(
        tuple(requests),
        tuple(r.arrival_s / speedup for r in requests),
        tuple(book.own_text(i, r) for i, r in enumerate(requests)),
        endpoint,
        ignore_eos,
    )


class _Sessions:
    """Each session's turns so far, and a signal per turn when its answer is in (one replay)."""

    def __init__(self, plan: ReplayPlan) -> None:
        self.previous: dict[int, int] = {}  # request index -> the index of its session's last turn
        last: dict[str, int] = {}
        for index, request in enumerate(plan.requests):
            if request.session is None:
                continue
            if request.session in last:
                self.previous[index] = last[request.session]
            last[request.session] = index
        self.done = {i: asyncio.Event() for i in range(len(plan.requests))}
        self.turns: dict[int, Turn] = {}

    def history(self, index: int) -> list[Turn]:
        chain: list[Turn] = []
        at = self.previous.get(index)
        while at is not None:
            chain.append(self.turns.get(at, Turn("", "")))
            at = self.previous.get(at)
        return chain[::-1]


def _body(plan: ReplayPlan, index: int, history: list[Turn]) -> dict[str, Any]:
    own = plan.own_texts[index]
    body: dict[str, Any] = {
        "max_tokens": plan.requests[index].output_tokens,
        "temperature": 0.0,
    }
    if plan.endpoint == "chat":
        body["messages"] = chat_messages(history, own)
    else:
        body["prompt"] = with_history(history, own)
    if plan.ignore_eos:
        body["ignore_eos"] = True
    return body


async def replay(
    client: httpx.AsyncClient, endpoint: Endpoint, plan: ReplayPlan, max_seconds: float
) -> LoopRun[Replied]:
    """Send every request of ``plan`` at its offset; requests still in flight at ``max_seconds``
    are cut (counted, neither completed nor failed)."""
    sessions = _Sessions(plan)
    path = ENDPOINT_PATHS[plan.endpoint]

    async def send(index: int) -> Replied:
        waited = 0.0
        before = sessions.previous.get(index)
        if before is not None:
            start = time.perf_counter()
            await sessions.done[before].wait()
            waited = time.perf_counter() - start
        body = _body(plan, index, sessions.history(index))
        reply: StreamReply | None = None
        try:
            reply = await astream(client, endpoint, path, body)
        finally:
            if reply is not None:
                sessions.turns[index] = Turn(plan.own_texts[index], reply.content)
            sessions.done[index].set()  # a failed or cut turn still lets the next one go
        return Replied(reply, waited)

    return await open_loop(send, plan.offsets, max_seconds)
