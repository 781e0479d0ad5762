"""Closed and open loops: never more in flight than asked, on schedule, and bounded in requests
and seconds (the cut counted, a bug in ``send`` raised)."""

from __future__ import annotations

import asyncio
import time

import pytest

from harness.scenarios.streams.loop import closed_loop, open_loop
from harness.scenarios.streams.schedule import LoopKind

# -- loops -------------------------------------------------------------------------------------


class Tracker:
    """A fake request: sleeps a while that depends on its index, counting what is in flight."""

    def __init__(self, seconds: float = 0.003, fail_at: int | None = None) -> None:
        self.seconds = seconds
        self.fail_at = fail_at
        self.in_flight = 0
        self.most = 0
        self.started: list[int] = []

    async def __call__(self, index: int) -> int:
        if index == self.fail_at:
            raise RuntimeError("a bug in send")
        self.started.append(index)
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(self.seconds * (1 + index % 3))
        finally:
            self.in_flight -= 1
        return index


@pytest.mark.parametrize(("concurrency", "requests"), [(1, 6), (2, 9), (5, 23), (8, 3)])
def test_closed_loop_never_exceeds_its_concurrency(concurrency: int, requests: int) -> None:
    send = Tracker()
    run = asyncio.run(closed_loop(send, concurrency, requests, max_seconds=30))
    assert send.most == run.max_in_flight == min(concurrency, requests)
    assert sorted(s.result for s in run.finished) == list(range(requests))
    assert (run.cut, run.hit_deadline, run.sent) == (0, False, requests)
    assert 0 < run.duration_s < 30
    assert all(s.due_s is None for s in run.finished)


def test_open_loop_sends_on_schedule_and_stops_at_the_schedule_end() -> None:
    offsets = [0.01, 0.02, 0.05, 0.06, 0.08]
    send = Tracker(seconds=0.02)
    run = asyncio.run(open_loop(send, offsets, max_seconds=30))
    assert sorted(send.started) == [0, 1, 2, 3, 4] and run.sent == 5 and run.cut == 0
    for sent in run.finished:
        assert sent.due_s == offsets[sent.index]
        assert sent.start_s >= sent.due_s  # never early; how late is the machine's business
    assert send.most >= 2  # requests overlap: an open loop does not wait for the last one


@pytest.mark.parametrize("kind", [LoopKind.CLOSED, LoopKind.OPEN])
def test_a_point_stops_at_max_seconds_and_counts_the_cut(kind: LoopKind) -> None:
    send = Tracker(seconds=20.0)  # a server that never answers in time
    began = time.perf_counter()
    if kind is LoopKind.CLOSED:
        run = asyncio.run(closed_loop(send, 3, 100, max_seconds=0.2))
    else:
        run = asyncio.run(open_loop(send, [0.0, 0.01, 0.02, 5.0], max_seconds=0.2))
    assert time.perf_counter() - began < 10  # bounded: far below the 20 s a request takes
    assert run.finished == () and run.cut == 3 and run.hit_deadline
    assert run.duration_s == 0.2 and send.in_flight == 0  # the cut were cancelled
    assert sorted(send.started) == [0, 1, 2]  # the arrival due at 5 s was never sent


def test_a_point_stops_at_its_request_bound() -> None:
    send = Tracker(seconds=0.001)
    run = asyncio.run(closed_loop(send, 4, 10, max_seconds=30))
    assert len(send.started) == 10 and run.sent == 10


@pytest.mark.parametrize("loop", ["closed", "open"])
def test_a_send_that_raises_is_a_bug_not_a_result(loop: str) -> None:
    send = Tracker(fail_at=1)
    with pytest.raises(RuntimeError, match="a bug in send"):
        if loop == "closed":
            asyncio.run(closed_loop(send, 2, 4, max_seconds=30))
        else:
            asyncio.run(open_loop(send, [0.0, 0.001, 0.002], max_seconds=30))
