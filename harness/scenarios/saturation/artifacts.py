"""What a ``saturation`` case records beside its knee metrics, typed: the SLO, the knee with
its interval, why the search stopped, and each load point it measured (what the report's
points table and knee chart redraw)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenarios.artifacts import ScenarioArtifacts


@dataclass(frozen=True)
class Spread:
    """Percentiles of one latency at a point (seconds; None: too few requests)."""

    n: int | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None


@dataclass(frozen=True)
class Point:
    """One load point the search measured."""

    value: float  # the offered load: req/s (rate loop) or requests in flight (concurrency)
    order: int | None = None  # when the search measured it (0: first)
    sent: int | None = None
    completed: int | None = None
    errors: int | None = None
    cut: int | None = None  # in flight at the point's bound
    ttft_s: Spread | None = None
    tpot_s: Spread | None = None
    e2e_s: Spread | None = None
    slo_verdict: str | None = None
    met_share: float | None = None  # the share of bootstrap resamples meeting the SLO
    # each p90's bootstrap interval (seconds), by latency kind (ttft, tpot, e2e)
    p90_interval_s: dict[str, tuple[float, float] | None] | None = None
    oversaturated: str | None = None  # why the point over-saturated the server
    good: bool = False

    def p90(self, kind: str) -> float | None:
        """The p90 of latency ``kind`` (ttft, tpot, e2e), seconds."""
        spread = {"ttft": self.ttft_s, "tpot": self.tpot_s, "e2e": self.e2e_s}.get(kind)
        return spread.p90 if spread is not None else None

    def interval(self, kind: str) -> tuple[float, float] | None:
        return (self.p90_interval_s or {}).get(kind)


@dataclass(frozen=True)
class KneeRecord:
    """The highest load meeting the SLO (None: none did), with its bootstrap interval."""

    value: float | None = None
    low: float | None = None
    high: float | None = None
    resamples: int | None = None
    at_ceiling: bool = False  # the search stopped at max_value still meeting it


@dataclass(frozen=True)
class SaturationArtifacts(ScenarioArtifacts):
    engine: str | None = None
    endpoint: str | None = None
    loop: str = "rate"  # rate (req/s) or concurrency
    counted_by: str | None = None  # tokenizer or chunks
    prompt_tokens_counted: int | None = None
    slo: dict[str, float | None] | None = None  # the p90 thresholds (seconds), by name
    confidence: float | None = None
    points: tuple[Point, ...] = ()  # by load
    knee: KneeRecord | None = None
    stop_reason: str | None = None
    finding: str | None = None

    @property
    def load_unit(self) -> str:
        return "req/s" if self.loop == "rate" else "concurrent"

    def slo_line(self) -> str | None:
        """``ttft_p90 ≤ 2 s, e2e_p90 ≤ 10 s``; None when no SLO was recorded."""
        if self.slo is None:
            return None
        return ", ".join(
            f"{k.removesuffix('_s')} ≤ {v:g} s" for k, v in self.slo.items() if v is not None
        )

    def threshold(self, name: str) -> float | None:
        """The SLO's threshold ``name`` (``ttft_p90_s``, ``e2e_p90_s``), seconds."""
        return (self.slo or {}).get(name)
