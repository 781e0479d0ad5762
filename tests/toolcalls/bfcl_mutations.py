"""Outputs for one BFCL entry, right and wrong in known ways, for two checkers to judge.

From an entry's possible answer, the "right" output takes each argument's first acceptable value
(nested answers written out whole). Each mutation kind changes it in one way; the kinds are
named in the agreement table. An output is decoded calls (``[{name: {arg: value}}]``) or, for
``malformed`` and ``cut``, tool-call text that fails to parse (``calls`` is None; BFCL's side
sees a failed decode).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.toolcalls.bfcl_import import expand


@dataclass(frozen=True)
class Mutation:
    kind: str
    calls: list[dict[str, dict[str, Any]]] | None  # BFCL's decoded form; None: decode fails
    text: str | None = None  # for calls None: the raw text our parser reads
    cut: bool = False  # the reply stopped at the token limit


def _choices(values: Sequence[Any]) -> list[Any]:
    return [v for v in values if v != ""]


def _first(values: Sequence[Any]) -> Any:
    return expand(_choices(values)[0])[0]


def _last(values: Sequence[Any]) -> Any:
    return expand(_choices(values)[-1])[-1]


def right_calls(ground_truth: Sequence[Mapping[str, Any]]) -> list[dict[str, dict[str, Any]]]:
    """Every call of the answer with each argument's first acceptable value; arguments whose
    only answer is "" (must be left out) are left out."""
    calls = []
    for call in ground_truth:
        (name, arguments), *_ = call.items()
        calls.append({name: {k: _first(v) for k, v in arguments.items() if _choices(v)}})
    return calls


def _types(functions: Sequence[Mapping[str, Any]], name: str) -> dict[str, str]:
    for function in functions:
        if function["name"] == name:
            properties = function.get("parameters", {}).get("properties", {})
            return {k: str(v.get("type", "")) for k, v in properties.items()}
    return {}


def wrong(value: Any) -> Any:
    """A different value of the same JSON kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7
    if isinstance(value, float):
        return value + 7.5
    if isinstance(value, str):
        return value + " qxz"
    if isinstance(value, list):
        return [*value, copy.deepcopy(value[-1])] if value else ["qxz"]
    if isinstance(value, dict):
        if not value:
            return {"qxz": 1}
        key = next(iter(value))
        return {**value, key: wrong(value[key])}
    return "qxz"


def _cased(text: str) -> str:
    """Case and spacing changed (equal under both checkers' string rules)."""
    return text.swapcase().replace(" ", "  ")


def _punctuated(text: str) -> str:
    """Punctuation BFCL's standardize_string drops, changed."""
    if "," in text:
        return text.replace(",", "")
    return text + "."


def _has_text(value: Any) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, dict):
        return any(_has_text(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_text(v) for v in value)
    return False


def _deep_cased(value: Any) -> Any:
    """Every text inside a nested value, at any depth, with case and spacing changed."""
    if isinstance(value, str):
        return _cased(value)
    if isinstance(value, dict):
        return {k: _deep_cased(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_cased(v) for v in value]
    return value


def _replace(calls: list[dict[str, dict[str, Any]]], index: int, key: str, value: Any) -> list:
    changed = copy.deepcopy(calls)
    (_name, arguments), *_ = changed[index].items()
    arguments[key] = value
    return changed


def _argument_mutations(
    calls: list[dict[str, dict[str, Any]]],
    answer_arguments: Mapping[str, Sequence[Any]],
    types: Mapping[str, str],
) -> Iterator[Mutation]:
    (name, arguments), *_ = calls[0].items()
    for key, values in answer_arguments.items():
        given = key in arguments
        if given:
            drop = copy.deepcopy(calls)
            del drop[0][name][key]
            yield Mutation("drop_argument", drop)
            value = arguments[key]
            yield Mutation("wrong_value", _replace(calls, 0, key, wrong(value)))
            if len(_choices(values)) > 1:
                yield Mutation("alternative_value", _replace(calls, 0, key, _last(values)))
            kind = types.get(key, "")
            if isinstance(value, str):
                yield Mutation("case_space", _replace(calls, 0, key, _cased(value)))
                yield Mutation("punctuation", _replace(calls, 0, key, _punctuated(value)))
            yield Mutation("null_value", _replace(calls, 0, key, None))
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                yield Mutation("string_for_number", _replace(calls, 0, key, str(value)))
                yield Mutation("bool_for_number", _replace(calls, 0, key, True))
                if kind == "integer":
                    yield Mutation("integral_float", _replace(calls, 0, key, float(value)))
                if kind == "float" and float(value).is_integer():
                    yield Mutation("int_for_float", _replace(calls, 0, key, int(value)))
            if isinstance(value, list) and value:
                changed = [wrong(value[0]), *value[1:]]
                yield Mutation("list_element", _replace(calls, 0, key, changed))
                if all(isinstance(v, str) for v in value):
                    cased = [_cased(v) for v in value]
                    yield Mutation("case_space", _replace(calls, 0, key, cased))
                floats = [v for v in value if isinstance(v, float)]
                if floats and all(v.is_integer() for v in floats):
                    ints = [int(v) if isinstance(v, float) else v for v in value]
                    yield Mutation("int_for_float_in_list", _replace(calls, 0, key, ints))
                if isinstance(value[0], dict) and _has_text(value[0]):
                    deep = [_deep_cased(value[0]), *value[1:]]
                    yield Mutation("nested_case", _replace(calls, 0, key, deep))
            if isinstance(value, dict) and value:
                inner = next(iter(value))
                changed_dict = {**value, inner: wrong(value[inner])}
                yield Mutation("nested_value", _replace(calls, 0, key, changed_dict))
                if _has_text(value):
                    yield Mutation("nested_case", _replace(calls, 0, key, _deep_cased(value)))
    yield Mutation("extra_argument", _replace(calls, 0, "qxz_unexpected", "x"))


def _text(calls: list[dict[str, dict[str, Any]]]) -> str:
    import json

    return "".join(
        f'<tool_call>\n{{"name": {json.dumps(n)}, "arguments": {json.dumps(a)}}}\n</tool_call>'
        for call in calls
        for n, a in call.items()
    )


def mutations(
    functions: Sequence[Mapping[str, Any]],
    ground_truth: Sequence[Mapping[str, Any]],
    stem: str,
) -> list[Mutation]:
    """Every mutation of one entry (irrelevance entries: abstain, a call, broken calls)."""
    if "irrelevance" in stem:
        function = functions[0]
        required = function.get("parameters", {}).get("required") or []
        call = [{function["name"]: {k: "x" for k in required}}]
        text = _text(call)
        return [
            Mutation("abstain", []),
            Mutation("irrelevant_call", call),
            Mutation("malformed", None, text.replace("}}\n</tool_call>", "\n</tool_call>")),
            Mutation("cut", None, text[: max(len(text) // 2, 12)], cut=True),
        ]
    calls = right_calls(ground_truth)
    (name, _), *_ = calls[0].items()
    answer_arguments = next(iter(ground_truth[0].values()))
    found = [
        Mutation("right", calls),
        Mutation("abstain", []),
        Mutation("wrong_name", [{f"{name}_v2": calls[0][name]}, *calls[1:]]),
        Mutation("extra_call", [*calls, copy.deepcopy(calls[0])]),
        *_argument_mutations(calls, answer_arguments, _types(functions, name)),
    ]
    text = _text(calls)
    found.append(Mutation("malformed", None, text.replace("}}\n</tool_call>", "\n</tool_call>", 1)))
    last = _text(calls[-1:])  # cut half-way through the last call
    found.append(Mutation("cut", None, text[: len(text) - len(last) // 2], cut=True))
    if len(calls) > 1:
        found.append(Mutation("reorder", list(reversed(calls))))
        found.append(Mutation("missing_call", calls[:-1]))
    return found
