"""Run one load point on an event loop: requests sent closed-loop or on an open-loop schedule,
bounded in requests AND in seconds.

``send(index)`` is any coroutine that makes one request and returns what it got (it must not
raise for a failed request: the serving scenario's returns the reply with its error). At the
deadline no new request is sent and the ones still in flight are cancelled: they are counted as
``cut``, neither completed nor failed, so a slow server cannot hold a point past its bound.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
Send = Callable[[int], Awaitable[T]]


@dataclass(frozen=True)
class Sent(Generic[T]):
    """One request that finished: its index, when it was sent (seconds after the point began),
    when the open-loop schedule wanted it sent (None: closed loop), and what ``send`` returned."""

    index: int
    start_s: float
    due_s: float | None
    result: T


@dataclass(frozen=True)
class LoopRun(Generic[T]):
    """A point's requests: those that finished (in finishing order), how many were cut at the
    deadline, the point's duration (start to the last finish, or to the deadline), and the most
    requests that were in flight at once."""

    finished: tuple[Sent[T], ...]
    cut: int
    duration_s: float
    hit_deadline: bool
    max_in_flight: int

    @property
    def sent(self) -> int:
        return len(self.finished) + self.cut


class _Flight(Generic[T]):
    """The requests of one point in flight and finished (local to one run, never shared)."""

    def __init__(self, send: Send[T]) -> None:
        self.send = send
        self.start = time.perf_counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.finished: list[Sent[T]] = []
        self.last_end_s = 0.0

    def now(self) -> float:
        return time.perf_counter() - self.start

    async def run(self, index: int, due_s: float | None = None) -> None:
        sent_at = self.now()
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            result = await self.send(index)
        finally:
            self.in_flight -= 1
        self.finished.append(Sent(index, sent_at, due_s, result))
        self.last_end_s = self.now()

    def outcome(self, hit_deadline: bool, max_seconds: float) -> LoopRun[T]:
        """The point as it stands now (take it before cancelling anything: a cancelled request
        leaves the flight)."""
        duration = max_seconds if hit_deadline else self.last_end_s
        finished = tuple(self.finished)
        return LoopRun(finished, self.in_flight, duration, hit_deadline, self.max_in_flight)


async def _bounded(
    tasks: Sequence[asyncio.Task[None]], flight: _Flight[T], max_seconds: float
) -> LoopRun[T]:
    """Wait for ``tasks`` until the deadline, cancel what is left, re-raise a bug in one."""
    remaining = max(max_seconds - flight.now(), 0.0)
    done, pending = await asyncio.wait(tasks, timeout=remaining)
    run = flight.outcome(bool(pending), max_seconds)  # before cancelling: the cut are in flight
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    for task in done:
        task.result()  # a send that raised: a bug, not a server's failure
    return run


async def closed_loop(
    send: Send[T], concurrency: int, max_requests: int, max_seconds: float
) -> LoopRun[T]:
    """``concurrency`` workers, each sending its next request when its last one ends, until
    ``max_requests`` were sent or ``max_seconds`` passed."""
    if concurrency < 1 or max_requests < 0 or max_seconds <= 0:
        raise ValueError("concurrency >= 1, max_requests >= 0 and max_seconds > 0")
    flight = _Flight(send)
    indices = itertools.count()

    async def worker() -> None:
        while flight.now() < max_seconds:
            index = next(indices)
            if index >= max_requests:
                return
            await flight.run(index)

    workers = [asyncio.create_task(worker()) for _ in range(min(concurrency, max_requests))]
    if not workers:
        return flight.outcome(False, max_seconds)
    return await _bounded(workers, flight, max_seconds)


async def open_loop(send: Send[T], offsets: Sequence[float], max_seconds: float) -> LoopRun[T]:
    """One request at each of ``offsets`` (seconds after the start, ascending), whatever is in
    flight, until the schedule ends or ``max_seconds`` passed; then wait for those in flight."""
    if max_seconds <= 0:
        raise ValueError("max_seconds > 0")
    flight = _Flight(send)
    requests: list[asyncio.Task[None]] = []

    async def dispatch() -> None:
        for index, due in enumerate(offsets):
            if due >= max_seconds:
                break
            delay = due - flight.now()
            if delay > 0:
                await asyncio.sleep(delay)
            requests.append(asyncio.create_task(flight.run(index, due)))
        if requests:
            await asyncio.wait(requests)

    dispatcher = asyncio.create_task(dispatch())
    try:
        run = await _bounded([dispatcher], flight, max_seconds)
    finally:
        left = [task for task in requests if not task.done()]
        for task in left:
            task.cancel()
        if left:
            await asyncio.gather(*left, return_exceptions=True)
    for task in requests:
        if task.done() and not task.cancelled():
            task.result()  # a send that raised: a bug, not a server's failure
    return run
