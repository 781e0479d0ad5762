"""Per-scenario params in the suite JSON Schema: unknown keys rejected, documented, with units."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from harness.scenarios import SCENARIOS
from harness.spec.scenario_params import all_param_docs, param_docs, params_models
from harness.spec.schema import json_schema

SUITES = Path(__file__).resolve().parents[2] / "suites"


def _suite(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "models": [{"embedded": "zoo/llama"}],
        "scenarios": [entry],
    }


def _errors(doc: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(json_schema())
    return [e.message for e in validator.iter_errors(doc)]


@pytest.mark.parametrize("name", SCENARIOS.names())
def test_defaults_of_each_scenario_validate(name: str) -> None:
    assert _errors(_suite({"scenario": name})) == []


@pytest.mark.parametrize("name", SCENARIOS.names())
def test_an_unknown_parameter_of_each_scenario_is_rejected(name: str) -> None:
    errors = _errors(_suite({"scenario": name, "params": {"no_such_param": 1}}))
    assert any("no_such_param" in e for e in errors), errors


@pytest.mark.parametrize("name", SCENARIOS.names())
def test_an_unknown_swept_parameter_is_rejected(name: str) -> None:
    errors = _errors(_suite({"scenario": name, "sweep": {"no_such_param": [1, 2]}}))
    assert any("no_such_param" in e for e in errors), errors


@pytest.mark.parametrize(
    ("entry", "ok"),
    [
        ({"scenario": "throughput", "params": {"prompt_tokens": 64, "depth": 128}}, True),
        ({"scenario": "throughput", "params": {"prompt_tokens": "many"}}, False),
        ({"scenario": "throughput", "params": {"prompt_tokens": 0}}, False),
        ({"scenario": "throughput", "sweep": {"prompt_tokens": [128, 512]}}, True),
        ({"scenario": "throughput", "sweep": {"prompt_tokens": []}}, False),
        ({"scenario": "throughput", "sweep": {"prompt_tokens": ["x"]}}, False),
        ({"scenario": "prompt_cache", "params": {"shape": "multi_turn"}}, True),
        ({"scenario": "prompt_cache", "params": {"shape": "sideways"}}, False),
        # a parameter of another scenario is unknown here
        ({"scenario": "load", "params": {"prompt_tokens": 64}}, False),
        ({"scenario": "no_such_scenario"}, False),
    ],
)
def test_param_values_are_checked_per_scenario(entry: dict[str, Any], ok: bool) -> None:
    assert (_errors(_suite(entry)) == []) is ok


@pytest.mark.parametrize("path", sorted(SUITES.glob("*.suite.yaml")), ids=lambda p: p.name)
def test_shipped_suites_validate_against_the_json_schema(path: Path) -> None:
    # as an editor sees it: YAML dates are plain strings in JSON
    doc = json.loads(json.dumps(yaml.safe_load(path.read_text()), default=str))
    assert _errors(doc) == []


def test_every_parameter_is_described() -> None:
    undocumented = [f"{d.scenario}.{d.name}" for d in all_param_docs() if not d.description]
    assert undocumented == []


@pytest.mark.parametrize(
    ("scenario", "param", "unit", "type_", "default"),
    [
        ("throughput", "prompt_tokens", "tokens", "int", "128"),
        ("throughput", "depth", "tokens", "int | null", "null"),
        ("api_contracts", "request_timeout_s", "s", "float", "60.0"),
        ("serving", "request_rates", "requests/s", "list[float]", "[]"),
        ("vision_throughput", "image_px", "px", "int", "224"),
        (
            "prompt_cache",
            "shape",
            "",
            '"exact_repeat" | "shared_prefix" | "multi_turn" | "divergent_edit"',
            '"shared_prefix"',
        ),
        ("api_contracts", "checks", "", "list[str]", "22 built-in values"),
    ],
)
def test_param_docs_carry_type_default_and_unit(
    scenario: str, param: str, unit: str, type_: str, default: str
) -> None:
    docs = {d.name: d for d in param_docs(scenario, params_models()[scenario])}
    doc = docs[param]
    assert (doc.unit, doc.type, doc.default) == (unit, type_, default)
