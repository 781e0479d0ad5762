"""The scenario contract: every built-in is a whole typed Scenario, model needs and backend needs
stay apart, and a model without a capability is narrowed to a skip that names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.base import BackendCapability, LoadInfo
from harness.backends.fake import FakeModel
from harness.cli.scenarios import CONTRACTS_BEGIN, CONTRACTS_END, NONE
from harness.probe.types import Capability
from harness.scenarios import SCENARIOS
from harness.scenarios.base import BaseScenario, Params, Scenario, ScenarioContext, lacks
from harness.scenarios.load import LoadParams
from harness.scenarios.prompt_cache import PromptCacheParams
from harness.scenarios.prompt_cache_lru import LruParams
from harness.scenarios.throughput import ThroughputParams
from harness.scenarios.tool_calls import ToolCallsParams
from tests.scenarios.minimal_scenario import MinimalScenario

DOCS = Path(__file__).resolve().parents[2] / "docs" / "scenarios.md"


def contract_table(text: str) -> list[tuple[str, str, str, str]]:
    """The rows of docs/scenarios.md's generated contract table (``make readme-params``):
    (scenario, params model, model needs, backend needs)."""
    start, end = text.index(CONTRACTS_BEGIN), text.index(CONTRACTS_END)
    rows = []
    for line in text[start:end].splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and line.startswith("| `"):
            rows.append((cells[0], cells[1], cells[2], cells[3]))
    return rows


def check_contract(name: str, params: str, needs: str, backend_needs: str) -> None:
    """A registered scenario is a whole typed Scenario whose declarations are its table row."""
    scenario = SCENARIOS.get(name)
    assert isinstance(scenario, Scenario) and isinstance(scenario, BaseScenario)
    model = scenario.params_model
    assert scenario.name == name and f"{model.__module__}.{model.__qualname__}" == params
    assert issubclass(model, Params)
    wanted = set() if needs == NONE else {Capability(v) for v in needs.split(", ")}
    assert scenario.needs == wanted and all(type(c) is Capability for c in scenario.needs)
    wanted_backend = (
        set()
        if backend_needs == NONE
        else {BackendCapability(v) for v in backend_needs.split(", ")}
    )
    assert scenario.backend_needs == wanted_backend
    assert all(type(c) is BackendCapability for c in scenario.backend_needs)


CONTRACTS = contract_table(DOCS.read_text(encoding="utf-8"))


def test_the_table_covers_every_builtin() -> None:
    assert {row[0] for row in CONTRACTS} == set(SCENARIOS.names())


@pytest.mark.parametrize(("name", "params", "needs", "backend_needs"), CONTRACTS)
def test_builtin_scenarios_are_whole_typed_scenarios(
    name: str, params: str, needs: str, backend_needs: str
) -> None:
    check_contract(name, params, needs, backend_needs)


def test_a_changed_need_breaks_the_contract() -> None:
    name, params, needs, backend_needs = next(r for r in CONTRACTS if r[0] == "throughput")
    with pytest.raises(AssertionError):
        check_contract(name, params, "chat", backend_needs)
    with pytest.raises(AssertionError):
        check_contract(name, "harness.scenarios.load.LoadParams", needs, backend_needs)


_Minimal = MinimalScenario


def test_the_base_class_gives_the_defaults() -> None:
    minimal = _Minimal()
    assert isinstance(minimal, Scenario)
    assert minimal.needs == frozenset() and minimal.backend_needs == frozenset()
    assert minimal.repeats_apply and minimal.workload(LoadParams()) is None


def _ctx(model: object) -> ScenarioContext:
    info = LoadInfo(0.0, 0, "none")
    return ScenarioContext(model, info, 1, 0, lambda: (model, info), backend="toy")


# (scenario, params, the capability a fake model (text generation only) lacks, or a plain object)
NARROWED = [
    ("prompt_cache", PromptCacheParams(prompt_tokens=16), FakeModel({}), "prompt cache"),
    ("prompt_cache_lru", LruParams(), FakeModel({}), "prompt cache"),
    ("tool_calls", ToolCallsParams(), FakeModel({}), "tool parsing"),
    ("throughput", ThroughputParams(), object(), "text generation"),
]


@pytest.mark.parametrize(("name", "params", "model", "label"), NARROWED)
def test_a_model_without_the_capability_is_a_skip_naming_it(
    name: str, params: Params, model: object, label: str
) -> None:
    output = SCENARIOS.get(name).run(_ctx(model), params)
    assert output.skip_reason == f"capability_missing: backend toy has no {label}"
    assert output.metrics == () and not output.failures


def test_lacks_names_the_backend_of_the_context() -> None:
    output = lacks(_ctx(object()), BackendCapability.AUDIO_OUT)
    assert output.skip_reason == "capability_missing: backend toy has no audio output"
