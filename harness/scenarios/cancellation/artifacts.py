"""What a ``cancellation`` case records beside its metrics that the report reads, typed."""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenarios.artifacts import ScenarioArtifacts


@dataclass(frozen=True)
class Trial:
    """One cancel: what the client read, when the server stopped, what came after."""

    received_tokens: int | None = None  # read before hanging up
    remaining_s: float | None = None  # the abandoned answer's remaining tokens, timed
    stop_s: float | None = None  # from the hang-up until the server stopped (None: not seen)
    watched_s: float | None = None  # how long the stop was watched for
    decoded_after: int | None = None  # decode steps after the hang-up (the server's counters)
    tokens_after_est: float | None = None  # else: the stop time at the known load's pace
    after_same: bool = False  # the answers after it equalled the warm control
    after_error: str | None = None
    after_differs: str | None = None


@dataclass(frozen=True)
class KnownLoad:
    tokens: int | None = None
    seconds: float | None = None
    tokens_per_s: float | None = None


@dataclass(frozen=True)
class CancellationArtifacts(ScenarioArtifacts):
    engine: str | None = None
    route: str | None = None  # how the server's stop was seen (counters or probes)
    known_load: KnownLoad | None = None
    max_stop_s: float | None = None
    cold_warm_drift: str | None = None
    trials: tuple[Trial, ...] | None = None  # None: the case measured no cancel
