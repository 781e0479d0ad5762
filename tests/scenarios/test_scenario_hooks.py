"""Every optional part of the scenario contract is declared, with its default, on
:class:`BaseScenario` and the :class:`Scenario` protocol: every built-in has each with the
declared type, the harness reads them as plain attributes (never ``getattr`` with a default),
and the registry refuses a plug-in that lacks one, in one line naming what and the fix."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.backends.base import BackendCapability
from harness.core.registry import IncompletePluginError, Registry
from harness.probe.types import Capability
from harness.scenarios import SCENARIOS
from harness.scenarios.base import (
    Params,
    ScenarioContext,
    Workload,
    missing_parts,
    scenario_parts,
)
from harness.scenarios.load import LoadParams
from tests.scenarios.minimal_scenario import MinimalScenario

REQUIRED = {"name", "version", "metrics", "params_model", "run"}


def _capabilities(kind: type) -> Callable[[object], bool]:
    return lambda v: isinstance(v, frozenset) and all(type(c) is kind for c in v)


def _texts(value: object) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, str) for v in value)


# (optional part, what its value must be, BaseScenario's default; None: a method)
HOOKS: list[tuple[str, Callable[[object], bool], object]] = [
    ("needs", _capabilities(Capability), frozenset()),
    ("backend_needs", _capabilities(BackendCapability), frozenset()),
    ("repeats_apply", lambda v: type(v) is bool, True),
    ("samples_from", lambda v: isinstance(v, str) and bool(v), "repeats"),
    ("measures_time", lambda v: type(v) is bool, True),
    ("headline_metrics", _texts, ()),
    ("workload", callable, None),
]


def test_the_table_covers_every_part_of_the_contract() -> None:
    """A part added to the protocol without a row here fails this test."""
    assert set(scenario_parts()) == REQUIRED | {row[0] for row in HOOKS}


_Minimal = MinimalScenario


@pytest.mark.parametrize(("part", "fits", "default"), HOOKS, ids=[h[0] for h in HOOKS])
def test_the_base_class_declares_each_optional_part_with_its_default(
    part: str, fits: Callable[[object], bool], default: object
) -> None:
    value = getattr(_Minimal(), part)
    assert fits(value)
    if default is not None:
        assert value == default


@pytest.mark.parametrize("name", SCENARIOS.names())
@pytest.mark.parametrize(("part", "fits", "default"), HOOKS, ids=[h[0] for h in HOOKS])
def test_every_builtin_has_each_optional_part_with_its_type(
    name: str, part: str, fits: Callable[[object], bool], default: object
) -> None:
    scenario = SCENARIOS.get(name)
    assert missing_parts(scenario) == ()
    assert fits(getattr(scenario, part)), (name, part, getattr(scenario, part))


@pytest.mark.parametrize("name", SCENARIOS.names())
def test_declared_headline_metrics_are_metrics_of_the_scenario(name: str) -> None:
    scenario = SCENARIOS.get(name)
    assert set(scenario.headline_metrics) <= {spec.name for spec in scenario.metrics}


class _ContextOnly(_Minimal):
    """A scenario that knows only its total context (the older form of ``workload``)."""

    def context_tokens(self, params: LoadParams) -> int | None:
        return 300


def test_context_tokens_is_the_default_workload() -> None:
    assert _Minimal().workload(LoadParams()) is None
    assert _ContextOnly().workload(LoadParams()) == Workload(300, 0)


HARNESS = Path(__file__).resolve().parents[2] / "harness"
HOOK_NAMES = "|".join(h[0] for h in HOOKS) + "|metrics|context_tokens"
# getattr(x, "part" ...) or hasattr(x, "part"): the hooks are read as plain attributes
READ_WITH_A_DEFAULT = re.compile(rf"""(?:get|has)attr\(\s*[\w.()]+,\s*["']({HOOK_NAMES})["']""")


def test_no_module_reads_a_scenario_part_with_a_fallback() -> None:
    found = [
        f"{path.relative_to(HARNESS.parent)}:{n}: {line.strip()}"
        for path in sorted(HARNESS.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "getattr(scenario," in line or READ_WITH_A_DEFAULT.search(line)
    ]
    assert found == []


def test_the_check_itself_finds_such_a_read() -> None:
    """The pattern above is not one that can never match."""
    assert READ_WITH_A_DEFAULT.search('bool(getattr(SCENARIOS.get(s), "measures_time", True))')
    assert READ_WITH_A_DEFAULT.search("getattr(plugin, 'headline_metrics', None)")
    assert not READ_WITH_A_DEFAULT.search("scenario.measures_time")


class _OldPlugIn:
    """An outside scenario from before the optional parts were declared."""

    name = "old"
    version = 1
    params_model = Params
    metrics = ()
    needs = frozenset()

    def run(self, ctx: ScenarioContext, params: Params) -> Any:
        return None


def test_the_registry_refuses_a_plugin_lacking_a_part_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = types.ModuleType("old_scenario_plugin")
    module.SCENARIO = _OldPlugIn()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    registry: Registry[Any] = Registry(
        "scenario",
        {"old": "old_scenario_plugin:SCENARIO"},
        missing=missing_parts,
        fix="subclass harness.api.BaseScenario",
    )
    with pytest.raises(IncompletePluginError) as raised:
        registry.get("old")
    assert str(raised.value) == (
        "scenario 'old' (old_scenario_plugin:SCENARIO) lacks backend_needs, headline_metrics, "
        "measures_time, repeats_apply, samples_from, workload; subclass harness.api.BaseScenario"
    )
    with pytest.raises(IncompletePluginError):  # nothing half-loaded is kept
        registry.get("old")


def test_the_cli_names_an_incomplete_plugin_in_one_error_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An installed plug-in is the user's input: an error line (exit 2), not an internal one."""
    from harness import cli

    module = types.ModuleType("old_scenario_plugin")
    module.SCENARIO = _OldPlugIn()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    SCENARIOS.names()  # entry points read first: the planted one stands as if installed
    monkeypatch.setitem(SCENARIOS._targets, "old", "old_scenario_plugin:SCENARIO")
    assert cli.main(["scenarios"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlx-harness: error: scenario 'old' (old_scenario_plugin:SCENARIO) ")
    assert "lacks backend_needs" in err and "subclass harness.api.BaseScenario" in err
    assert err.count("\n") == 1 and "Traceback" not in err
