"""What a ``serving`` case records beside its metrics that the report reads, typed: the case's
facts and each load point's summary (:func:`harness.scenarios.streams.artifacts.point_record`
writes it)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenarios.artifacts import ScenarioArtifacts


@dataclass(frozen=True)
class LatencySpread:
    """Percentiles of one latency at a point, seconds (None: too few requests)."""

    n: int | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None


@dataclass(frozen=True)
class PointRecord:
    key: str  # the point's key in its metric names (serving.<key>.*)
    kind: str | None = None  # rate or concurrency
    value: float | None = None  # the offered load
    label: str | None = None
    sent: int | None = None
    completed: int | None = None
    errors: int | None = None
    cut: int | None = None  # in flight at the deadline: cancelled, not judged
    hit_deadline: bool = False
    ttft_s: LatencySpread | None = None
    tpot_s: LatencySpread | None = None
    itl_s: LatencySpread | None = None
    e2e_s: LatencySpread | None = None
    slo_verdict: str | None = None
    error_kinds: tuple[tuple[str, int], ...] = ()  # (reason, requests), commonest first

    @property
    def shown(self) -> str:
        return self.label or self.key

    @property
    def finished(self) -> int:
        return (self.completed or 0) + (self.errors or 0)

    def spread(self, kind: str) -> LatencySpread | None:
        """The spread of latency ``kind`` (ttft, tpot, itl, e2e)."""
        return {"ttft": self.ttft_s, "tpot": self.tpot_s, "itl": self.itl_s, "e2e": self.e2e_s}.get(
            kind
        )


@dataclass(frozen=True)
class ServingArtifacts(ScenarioArtifacts):
    engine: str | None = None
    endpoint: str | None = None
    counted_by: str | None = None  # tokenizer or chunks
    prompt_tokens_counted: int | None = None
    slo: dict[str, float | None] | None = None  # the thresholds (seconds), by name
    points: tuple[PointRecord, ...] = ()
