"""What a ``trace_replay`` case records beside its metrics that the report reads, typed."""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenarios.artifacts import ScenarioArtifacts


@dataclass(frozen=True)
class TraceFacts:
    """The trace replayed: its file, format, and how many of its requests."""

    file: str | None = None
    format: str | None = None
    requests: int | None = None  # replayed
    of: int | None = None  # in the trace
    span_s: float | None = None
    sessions: int | None = None

    def line(self) -> str:
        """``mooncake, 40 of 100 requests, 3 sessions``."""
        line = f"{self.format}, {self.requests} of {self.of} requests"
        return line + (f", {self.sessions} sessions" if self.sessions else "")


@dataclass(frozen=True)
class ReplayFacts:
    cut: int | None = None  # requests in flight at max_seconds


@dataclass(frozen=True)
class TraceReplayArtifacts(ScenarioArtifacts):
    trace: TraceFacts | None = None
    speedup: float | None = None  # the trace's times divided by this
    replay: ReplayFacts | None = None
