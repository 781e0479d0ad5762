"""Metric definitions: name -> unit, direction of 'better', aggregation and noise floor."""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum

from harness.core.types import Unit


class VariesBy(str, Enum):
    """What a metric's samples are, so a comparison knows which test fits."""

    REPEAT = "repeat"  # repeated measurements of one thing (timings): compared as two samples
    ITEM = "item"  # one value per item (clip, text chunk), in the order of the case's `items`:
    # deterministic (greedy decoding repeats identically), compared item by item (paired)
    CASE = "case"  # one value a case, derived once (a ceiling): repeats add no samples, so it
    # is judged by its size, as a count is


@dataclass(frozen=True)
class MetricSpec:
    name: str
    unit: Unit
    higher_is_better: bool
    description: str
    aggregation: str = "median"
    noise_floor: float = 0.02  # relative change under which a difference is never a verdict
    varies_by: VariesBy = VariesBy.REPEAT

    @property
    def paired(self) -> bool:
        """Whether two runs compare item by item (:mod:`harness.results.paired`)."""
        return self.varies_by is VariesBy.ITEM

    @property
    def is_pattern(self) -> bool:
        """A family of metrics named by a glob (``serving.c*.ttft_p90_s``: every load point)."""
        return "*" in self.name


@dataclass(frozen=True)
class PointFigure:
    """One metric a scenario measures at each point of a sweep (a load point, a batch size),
    without the point: ``ttft_p90_s``. The scenario names the point's metric."""

    suffix: str
    unit: Unit
    higher_is_better: bool
    description: str
    noise_floor: float = 0.05

    def spec_named(self, name: str, where: str) -> MetricSpec:
        """The spec of this figure as metric ``name``, its description saying ``where``."""
        return MetricSpec(
            name,
            self.unit,
            self.higher_is_better,
            f"{self.description} ({where})",
            noise_floor=self.noise_floor,
        )


class MetricSpecs(Mapping[str, MetricSpec]):
    """Specs by name: exact names first, then the first pattern (:attr:`MetricSpec.is_pattern`)
    that matches, answered as a spec carrying the asked name. Iterates over the declared names
    (patterns included), for "did you mean" hints."""

    def __init__(self, specs: Iterable[MetricSpec]) -> None:
        self._exact: dict[str, MetricSpec] = {}
        self._patterns: dict[str, MetricSpec] = {}
        for spec in specs:
            (self._patterns if spec.is_pattern else self._exact)[spec.name] = spec

    def __getitem__(self, name: str) -> MetricSpec:
        if name in self._exact:
            return self._exact[name]
        for pattern, spec in self._patterns.items():
            if fnmatch.fnmatchcase(name, pattern):
                return dataclasses.replace(spec, name=name)
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        yield from self._exact
        yield from self._patterns

    def __len__(self) -> int:
        return len(self._exact) + len(self._patterns)


# the memory views every case records (``harness.runner.outcome.memory_metrics``)
MLX_PEAK = MetricSpec(
    "memory.mlx_peak_bytes",
    Unit.BYTES,
    False,
    "MLX allocator peak during the case (reset before it)",
)
MLX_ACTIVE = MetricSpec(
    "memory.mlx_active_bytes",
    Unit.BYTES,
    False,
    "MLX allocator active memory at the end of the case",
)
PROCESS_PEAK_RSS = MetricSpec(
    "memory.process_peak_rss_bytes",
    Unit.BYTES,
    False,
    "worker process peak resident set size (reset before the case where the OS allows)",
    noise_floor=0.05,
)
MEMORY_METRICS: tuple[MetricSpec, ...] = (MLX_PEAK, MLX_ACTIVE, PROCESS_PEAK_RSS)
