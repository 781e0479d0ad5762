"""Every metric a run can record, by name: the memory views of every case and what each
registered scenario (built-in or plug-in) declares."""

from __future__ import annotations

from harness.metrics import MEMORY_METRICS, MetricSpec
from harness.scenarios import SCENARIOS


def all_specs() -> dict[str, MetricSpec]:
    """Every metric the built-in and registered scenarios declare, by name."""
    specs = {spec.name: spec for spec in MEMORY_METRICS}
    for name in SCENARIOS.names():
        for spec in SCENARIOS.get(name).metrics:
            specs[spec.name] = spec
    return specs
