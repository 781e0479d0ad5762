"""Metric definitions: name -> unit, direction of 'better', aggregation and noise floor."""

from __future__ import annotations

from dataclasses import dataclass

from harness.types import Unit


@dataclass(frozen=True)
class MetricSpec:
    name: str
    unit: Unit
    higher_is_better: bool
    description: str
    aggregation: str = "median"
    noise_floor: float = 0.02  # relative change under which a difference is never a verdict


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
