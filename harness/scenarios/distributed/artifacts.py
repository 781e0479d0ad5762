"""What a ``distributed`` case records beside its metrics that the report reads, typed: the
world it launched and each rank's own facts (its memory, its link's measured speed)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenarios.artifacts import ScenarioArtifacts


@dataclass(frozen=True)
class LinkFigure:
    """One collective measured before the run: ``op`` over ``size_bytes``."""

    op: str | None = None  # all_sum or send_recv
    size_bytes: int | None = None
    seconds: float | None = None
    bytes_per_s: float | None = None


@dataclass(frozen=True)
class RankFacts:
    rank: int | None = None
    host: str | None = None
    status: str | None = None
    reason: str | None = None
    peak_memory_bytes: int | None = None
    rss_bytes: int | None = None
    link: tuple[LinkFigure, ...] = ()

    def rate(self, op: str, size: int) -> float | None:
        """The bytes/s of ``op`` over ``size`` bytes, if measured."""
        return next((f.bytes_per_s for f in self.link if f.op == op and f.size_bytes == size), None)


@dataclass(frozen=True)
class DistributedArtifacts(ScenarioArtifacts):
    world_size: int | None = None
    split: str | None = None  # tensor, pipeline or none
    backend: str | None = None
    hosts: str | None = None  # hostfile or localhost
    ranks: tuple[RankFacts, ...] = ()

    def split_line(self) -> str | None:
        """``tensor x2``; None when the split or world was not recorded."""
        if self.split is None or self.world_size is None:
            return None
        return f"{self.split} x{self.world_size}"
