"""Every metric a run can record, by name: the memory views of every case and what each
registered scenario (built-in or plug-in) declares."""

from __future__ import annotations

from harness.core.metrics import MEMORY_METRICS, MetricSpec, MetricSpecs
from harness.scenarios import SCENARIOS


def all_specs() -> MetricSpecs:
    """Every metric the built-in and registered scenarios declare, by name (a pattern spec
    such as ``serving.c*.ttft_p90_s`` answers for every name it matches)."""
    specs: list[MetricSpec] = list(MEMORY_METRICS)
    for name in SCENARIOS.names():
        specs.extend(SCENARIOS.get(name).metrics)
    return MetricSpecs(specs)
