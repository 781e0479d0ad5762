"""OpenAI-style tool schemas: parameter lookup, JSON types, and typing text by a schema.

Types are judged as Python (and BFCL's checker) judge them: an ``integer`` takes no float, not
even ``5.0``; a ``number`` takes an int or a float; a boolean is neither. (JSON Schema itself
lets ``5.0`` be an integer; a function called with it in Python gets a float.)"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Tools = Sequence[Mapping[str, Any]] | None

JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


def function_schema(name: str, tools: Tools) -> Mapping[str, Any] | None:
    for tool in tools or ():
        function = tool.get("function", tool)
        if isinstance(function, Mapping) and function.get("name") == name:
            return function
    return None


def _properties(name: str, tools: Tools) -> Mapping[str, Any]:
    function = function_schema(name, tools) or {}
    parameters = function.get("parameters") or {}
    properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
    return properties if isinstance(properties, Mapping) else {}


def parameter_names(name: str, tools: Tools) -> list[str]:
    """Parameter names in schema order (the order a rendered Python signature uses)."""
    return list(_properties(name, tools))


def parameter_schema(name: str, key: str, tools: Tools) -> Mapping[str, Any] | None:
    schema = _properties(name, tools).get(key)
    return schema if isinstance(schema, Mapping) else None


def schema_types(schema: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Declared JSON types: ``type`` (a name or a list), else the union of anyOf/oneOf."""
    if not schema:
        return ()
    declared = schema.get("type")
    if isinstance(declared, str):
        return (declared,)
    if isinstance(declared, list):
        return tuple(t for t in declared if isinstance(t, str))
    found: list[str] = []
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key) or ():
            if isinstance(option, Mapping):
                found.extend(t for t in schema_types(option) if t not in found)
    return tuple(found)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def conforms(value: Any, types: Sequence[str]) -> bool:
    """Whether ``value`` has one of the JSON types, as Python and BFCL see them: an integer is a
    number, a float is never an integer (not even ``5.0``), a boolean is neither."""
    if not types:
        return True
    kind = json_type(value)
    if kind == "integer" and "number" in types:
        return True
    return kind in types


def required_parameters(name: str, tools: Tools) -> tuple[str, ...]:
    """The parameters the schema of ``name`` lists under ``required`` (none without a schema)."""
    function = function_schema(name, tools) or {}
    parameters = function.get("parameters") or {}
    required = parameters.get("required") if isinstance(parameters, Mapping) else None
    if not isinstance(required, list):
        return ()
    return tuple(k for k in required if isinstance(k, str))


@dataclass(frozen=True)
class TypeMismatch:
    """Where a value breaks its schema: the path to the part, the types allowed, the part."""

    path: str
    types: tuple[str, ...]
    value: Any


def mismatch(value: Any, schema: Mapping[str, Any] | None, path: str) -> TypeMismatch | None:
    """The first part of ``value`` whose JSON type ``schema`` does not allow (None when all
    conform): the value itself, then each item by ``items``, each given key by ``properties``."""
    types = schema_types(schema)
    if not conforms(value, types):
        return TypeMismatch(path, types, value)
    if schema is None:
        return None
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        for index, item in enumerate(value):
            found = mismatch(item, items, f"{path}[{index}]")
            if found:
                return found
    properties = schema.get("properties")
    if isinstance(value, dict) and isinstance(properties, Mapping):
        for key, item in value.items():
            inner = properties.get(key)
            found = mismatch(item, inner, f"{path}.{key}") if isinstance(inner, Mapping) else None
            if found:
                return found
    return None


def _typed(raw: str, kind: str) -> Any:
    text = raw.strip()
    if kind == "null" and text.lower() in ("null", "none"):
        return None
    if kind == "integer":
        return int(text)
    if kind == "number":
        number = float(text)
        return int(number) if number.is_integer() and "." not in text else number
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if kind in ("object", "array"):
        value = json.loads(text)
        if json_type(value) == kind:
            return value
    raise ValueError(f"{raw!r} is not {kind}")


def coerce_text(raw: str, schema: Mapping[str, Any] | None) -> Any:
    """Type a textual value: by the schema's types when declared, else JSON if it is JSON."""
    types = schema_types(schema)
    for kind in ("null", "integer", "number", "boolean", "object", "array"):
        if kind in types:
            try:
                return _typed(raw, kind)
            except ValueError:
                continue
    if "string" in types:
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw
