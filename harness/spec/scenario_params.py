"""Every scenario's parameters, documented from one source: the scenarios' pydantic params models.

The suite JSON Schema (:func:`scenario_variants`), ``mlx-harness scenarios`` and the parameter
table of docs/scenarios.md (``make readme-params``) all read these, so none of them can drift
from what a suite is validated with. A parameter's unit is its field's
``json_schema_extra["unit"]`` when given, else read from its name (``*_s`` seconds, ``*tokens``
and ``depth`` tokens, ``*_px`` pixels).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from harness.scenarios import SCENARIOS

# name suffix -> unit, the first that matches wins
UNIT_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("_s", "s"),
    ("tokens", "tokens"),
    ("_px", "px"),
    ("_bits", "bits"),
    ("depth", "tokens"),  # tokens already in the KV cache
)
LONGEST_DEFAULT = 40  # characters; a longer list default is counted instead


@dataclass(frozen=True)
class ParamDoc:
    """One parameter of one scenario, as people read it."""

    scenario: str
    name: str
    type: str
    default: str  # "required" when there is none
    unit: str  # "" when the value has none
    description: str


def params_models() -> dict[str, type[BaseModel]]:
    """Scenario name -> its params model, for every registered scenario (plug-ins too)."""
    return {name: SCENARIOS.get(name).params_model for name in SCENARIOS.names()}


def _unit(name: str, extra: Any) -> str:
    if isinstance(extra, Mapping) and isinstance(extra.get("unit"), str):
        return str(extra["unit"])
    return next((unit for suffix, unit in UNIT_SUFFIXES if name.endswith(suffix)), "")


def _type_text(prop: Mapping[str, Any], defs: Mapping[str, Any]) -> str:
    """A JSON Schema property as a short type: ``int``, ``number | null``, ``list[...]``."""
    if "$ref" in prop:
        target = defs.get(str(prop["$ref"]).rsplit("/", 1)[-1], {})
        return "object" if target.get("type") == "object" else _type_text(target, defs)
    if "enum" in prop:
        return " | ".join(json.dumps(v) for v in prop["enum"])
    if "const" in prop:
        return json.dumps(prop["const"])
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return " | ".join(dict.fromkeys(_type_text(p, defs) for p in prop[key]))
    kind = prop.get("type")
    if kind == "array":
        return f"list[{_type_text(prop.get('items', {}), defs)}]"
    names = {"integer": "int", "number": "float", "boolean": "bool", "string": "str"}
    if isinstance(kind, str):
        return names.get(kind, kind)
    return "any"


def _default_text(field: Any) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    text = json.dumps(value, default=str)
    if isinstance(value, list) and len(text) > LONGEST_DEFAULT:
        return f"{len(value)} built-in values"
    return text


def param_docs(name: str, model: type[BaseModel]) -> list[ParamDoc]:
    """The documented parameters of scenario ``name`` (params model ``model``), in order."""
    schema = model.model_json_schema()
    props, defs = schema.get("properties", {}), schema.get("$defs", {})
    return [
        ParamDoc(
            scenario=name,
            name=key,
            type=_type_text(props.get(key, {}), defs),
            default=_default_text(field),
            unit=_unit(key, field.json_schema_extra),
            description=field.description or "",
        )
        for key, field in model.model_fields.items()
    ]


def all_param_docs() -> list[ParamDoc]:
    return [doc for name, model in params_models().items() for doc in param_docs(name, model)]


def scenario_variants() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``($defs, rules)`` for the suite schema: the params models' definitions, and one
    ``if scenario == NAME then params/sweep are NAME's`` rule per scenario (unknown keys fail)."""
    models = params_models()
    keys, top = models_json_schema(
        [(m, "validation") for m in models.values()], ref_template="#/$defs/{model}"
    )
    defs: dict[str, Any] = top.get("$defs", {})
    rules = []
    for name, model in models.items():
        ref = keys[(model, "validation")]["$ref"]
        own = defs[ref.rsplit("/", 1)[-1]]
        sweep = {
            key: {
                "type": "array",
                "minItems": 1,
                "items": prop,
                "description": f"values of '{key}' to sweep: one case each",
            }
            for key, prop in own.get("properties", {}).items()
        }
        rules.append(
            {
                "if": {"properties": {"scenario": {"const": name}}, "required": ["scenario"]},
                "then": {
                    "properties": {
                        "params": {"$ref": ref},
                        "sweep": {
                            "type": "object",
                            "properties": sweep,
                            "additionalProperties": False,
                        },
                    }
                },
            }
        )
    return defs, rules
