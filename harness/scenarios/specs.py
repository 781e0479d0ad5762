"""Every metric a run can record, by name: the memory views of every case and what each
registered scenario (built-in or plug-in) declares."""

from __future__ import annotations

from collections.abc import Iterator

from harness.core.metrics import MEMORY_METRICS, MetricSpec, MetricSpecs
from harness.scenarios import SCENARIOS


class RegisteredSpecs(MetricSpecs):
    """The specs of every registered scenario, each scenario imported when a name of its own
    (``<scenario>.<metric>``, as every scenario names its metrics) is first asked for: a run
    of two scenarios does not import the other thirty and their libraries (HTTP clients,
    numpy, JSON Schema), which is most of the command's start. A name no scenario's prefix
    answers is looked up in all of them, so a plug-in that names its metrics otherwise is
    still found; iterating (for "did you mean" hints) loads every scenario."""

    def __init__(self) -> None:
        super().__init__(MEMORY_METRICS)
        self._scenarios: dict[str, MetricSpecs] = {}
        self._everything: MetricSpecs | None = None

    def _of(self, scenario: str) -> MetricSpecs | None:
        if scenario not in self._scenarios:
            if scenario not in SCENARIOS:
                return None
            self._scenarios[scenario] = MetricSpecs(SCENARIOS.get(scenario).metrics)
        return self._scenarios[scenario]

    def _all(self) -> MetricSpecs:
        if self._everything is None:
            specs: list[MetricSpec] = list(MEMORY_METRICS)
            for name in SCENARIOS.names():
                specs.extend(SCENARIOS.get(name).metrics)
            self._everything = MetricSpecs(specs)
        return self._everything

    def __getitem__(self, name: str) -> MetricSpec:
        try:
            return super().__getitem__(name)
        except KeyError:
            pass
        own = self._of(name.partition(".")[0])
        if own is not None:
            try:
                return own[name]
            except KeyError:
                pass
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def all_specs() -> MetricSpecs:
    """Every metric the built-in and registered scenarios declare, by name (a pattern spec
    such as ``serving.c*.ttft_p90_s`` answers for every name it matches), each scenario's
    read when first asked for."""
    return RegisteredSpecs()
