"""What a ``soak`` case records beside its metrics that the report reads, typed: the request
counts, the memory readings as columns, the growth fit, the latency windows and drift."""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenarios.artifacts import ScenarioArtifacts


@dataclass(frozen=True)
class MemorySeries:
    """The readings as columns, one entry per reading (None: not read on this system)."""

    t_s: tuple[float, ...] = ()  # seconds into the soak
    rss_bytes: tuple[int | None, ...] = ()
    footprint_bytes: tuple[int | None, ...] = ()  # macOS: the physical footprint
    swap_used_bytes: tuple[int | None, ...] = ()
    pressure: tuple[str | None, ...] = ()  # macOS: normal, warning, critical
    stall_pct: tuple[float | None, ...] = ()  # Linux: PSI memory "some" avg10

    def column(self, name: str) -> tuple[float | None, ...]:
        """One of the byte columns by its key (``rss_bytes``, ``footprint_bytes``,
        ``swap_used_bytes``)."""
        columns = {
            "rss_bytes": self.rss_bytes,
            "footprint_bytes": self.footprint_bytes,
            "swap_used_bytes": self.swap_used_bytes,
        }
        return tuple(columns.get(name, ()))


@dataclass(frozen=True)
class Growth:
    """Memory growth per request fitted over the settled part, with its 95% interval."""

    bytes_per_request: float | None = None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class LatencyWindow:
    """The latency percentiles of requests ``first`` to ``last`` (seconds)."""

    first: int | None = None
    last: int | None = None
    e2e_p50_s: float | None = None
    e2e_p90_s: float | None = None
    e2e_p99_s: float | None = None
    ttft_p50_s: float | None = None
    ttft_p90_s: float | None = None
    ttft_p99_s: float | None = None

    def percentiles(self, kind: str) -> tuple[float | None, float | None, float | None]:
        """p50, p90, p99 of ``kind`` (e2e or ttft)."""
        if kind == "ttft":
            return self.ttft_p50_s, self.ttft_p90_s, self.ttft_p99_s
        return self.e2e_p50_s, self.e2e_p90_s, self.e2e_p99_s


@dataclass(frozen=True)
class Drift:
    quantile: int | None = None
    first_s: float | None = None
    last_s: float | None = None


@dataclass(frozen=True)
class SoakArtifacts(ScenarioArtifacts):
    engine: str | None = None
    endpoint: str | None = None
    completed: int | None = None
    errors: int | None = None
    cut: int | None = None
    duration_s: float | None = None
    measure: str | None = None  # phys_footprint or rss: what the growth is fitted on
    memory_why_not: str | None = None
    wired_limit_bytes: int | None = None  # macOS: Metal's wired limit (0: system default)
    settle_from_request: int | None = None
    bound_mib_per_1000: float | None = None
    growth: Growth | None = None
    memory: MemorySeries | None = None  # None: no reading was taken
    windows: tuple[LatencyWindow, ...] = ()
    drift: Drift | None = None
