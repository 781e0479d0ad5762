"""What a ``stall`` case records beside its metrics that the report reads, typed."""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenarios.artifacts import ScenarioArtifacts


@dataclass(frozen=True)
class StallArtifacts(ScenarioArtifacts):
    engine: str | None = None
    streams: int | None = None  # running streams when the long prompt arrived
    long_prompt_tokens: int | None = None
    window_s: float | None = None  # from the long prompt's sending to its first token
    finding: str | None = None
    # per running stream, (seconds since the long prompt's arrival, ITL seconds) points
    timeline: tuple[tuple[tuple[float, float], ...], ...] = ()
