"""After a client hangs up: how long until the server stops producing tokens.

Two ways, the first the server allows:

- its counters (:mod:`harness.backends.server_counters`: llama-server's ``/metrics`` or
  ``/slots``): polled every ``poll_s`` from the hang-up until no request is processing; the
  stop time is the first idle reading (to within one poll), and the decode steps it ran in
  between are counted;
- otherwise, for a server on this machine, its own CPU time: sampled every ``window_s`` from
  the hang-up until three windows in a row fall to the idle side of a threshold set between the
  server's use at idle and while it generated the known load (measured in the case); other
  processes' load does not move it;
- otherwise probes: the short warm request asked back to back from the hang-up, each timed end
  to end against the same request's times at idle (``baseline``). A server still generating the
  abandoned answer answers slower (a server of one slot makes the probe wait for it whole); the
  stop time is when the first probe answered at idle speed was sent, to within one probe's
  time (the slowest that counts as idle: a stop is late only past the bound plus that). A
  server that batches the abandoned answer with the probe may slow it too little to show:
  counters are the reliable way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.backends.server_counters import Activity

# a probe at idle speed takes at most this much more than the slowest idle probe ...
PROBE_SLACK = 2.0
PROBE_MARGIN_S = 0.1  # ... plus this (a busy shared machine's jitter)
QUIET_WINDOWS = 3  # windows in a row of idle CPU use that say a server stopped


@dataclass(frozen=True)
class Stop:
    """When the server stopped after a hang-up (``stop_s``, seconds after it; None: not within
    the watch), how it was seen (``counters`` or ``probes``), the decode steps it ran meanwhile
    (counters only), the probes sent, and how long it was watched."""

    stop_s: float | None
    how: str
    decoded_after: int | None
    probes: int
    watched_s: float


def idle_bound_s(baseline_s: Sequence[float]) -> float:
    """The slowest a probe may be and count as answered at idle speed."""
    return max(baseline_s) * PROBE_SLACK + PROBE_MARGIN_S


def watch_counters(
    read: Callable[[], Activity | None],
    hung_up_at: float,
    max_watch_s: float,
    poll_s: float,
) -> Stop:
    """Poll ``read`` until the server processes nothing (``hung_up_at``: a ``perf_counter``)."""
    first: Activity | None = None
    polls = 0
    while True:
        now = time.perf_counter()
        reading = read()
        polls += 1
        if reading is not None and first is None:
            first = reading
        if reading is not None and reading.idle:
            decoded = None
            if first is not None and first.decoded is not None and reading.decoded is not None:
                decoded = max(reading.decoded - first.decoded, 0)
            return Stop(
                now - hung_up_at, "counters " + reading.source, decoded, 0, now - hung_up_at
            )
        if now - hung_up_at >= max_watch_s:
            source = first.source if first is not None else "(no reading)"
            return Stop(None, "counters " + source, None, 0, now - hung_up_at)
        time.sleep(poll_s)


@dataclass(frozen=True)
class CpuRates:
    """A server's CPU use (CPU seconds a second) at idle and while generating; ``usable`` when
    generating clearly shows (three times idle, and 0.1 of a core more at least)."""

    idle: float
    busy: float

    @property
    def usable(self) -> bool:
        return self.busy >= max(3 * self.idle, self.idle + 0.1)

    @property
    def threshold(self) -> float:
        return self.idle + 0.25 * (self.busy - self.idle)


def watch_cpu(
    read: Callable[[], float | None],
    hung_up_at: float,
    rates: CpuRates,
    max_watch_s: float,
    window_s: float,
) -> Stop:
    """Windows of ``window_s`` from the hang-up until :data:`QUIET_WINDOWS` in a row have CPU
    use at most the threshold (one quiet window can be a busy server descheduled on a loaded
    machine); the stop is the first of them's start (to within one window)."""
    start, used = time.perf_counter(), read()
    quiet_since: float | None = None
    quiet = 0
    while True:
        time.sleep(window_s)
        now, later = time.perf_counter(), read()
        if used is None or later is None:
            return Stop(None, "server CPU time (unreadable)", None, 0, now - hung_up_at)
        if (later - used) / max(now - start, 1e-9) <= rates.threshold:
            quiet_since = start if quiet == 0 else quiet_since
            quiet += 1
            if quiet >= QUIET_WINDOWS and quiet_since is not None:
                return Stop(quiet_since - hung_up_at, "server CPU time", None, 0, now - hung_up_at)
        else:
            quiet, quiet_since = 0, None
        if now - hung_up_at >= max_watch_s:
            return Stop(None, "server CPU time", None, 0, now - hung_up_at)
        start, used = now, later


@dataclass(frozen=True)
class Probe:
    """One probe: sent ``sent_s`` after the hang-up, answered in ``e2e_s`` (None: it failed)."""

    sent_s: float
    e2e_s: float | None


def watch_probes(
    probe: Callable[[], float | None],
    hung_up_at: float,
    bound_s: float,
    max_watch_s: float,
) -> tuple[Stop, tuple[Probe, ...]]:
    """Send ``probe`` (returns its e2e seconds, None when it failed) back to back until one
    answers within ``bound_s`` or ``max_watch_s`` passed."""
    probes: list[Probe] = []
    while True:
        last = probes[-1] if probes else None
        if last is not None and last.e2e_s is not None and last.e2e_s <= bound_s:
            watched = time.perf_counter() - hung_up_at
            return Stop(last.sent_s, "probes", None, len(probes), watched), tuple(probes)
        watched = time.perf_counter() - hung_up_at
        if watched >= max_watch_s:
            return Stop(None, "probes", None, len(probes), watched), tuple(probes)
        sent = time.perf_counter() - hung_up_at
        probes.append(Probe(sent, probe()))
