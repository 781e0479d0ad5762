"""The harness's own reference parser for pythonic calls: a Python list of calls with keyword
arguments, ``[get_weather(city="Paris"), get_time(timezone="Asia/Tokyo")]`` (Llama 3.2/4),
between LFM2's ``<|tool_call_start|>`` and ``<|tool_call_end|>`` (mlx-lm's ``pythonic``).

Values are Python literals; the JSON words ``true``, ``false`` and ``null`` a template writes
inside containers are read as Python's.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

from harness.toolcalls.model import ToolCall
from harness.toolcalls.ref_delimited import extract_between

tool_call_start = "<|tool_call_start|>"
tool_call_end = "<|tool_call_end|>"

Tools = Sequence[Mapping[str, Any]] | None
# a body carries markup of its own (a list of Python calls): one whose opening marker a server
# took as its tool state's start is still a call (:func:`.own_reading.read_own_calls`)
BODY_MARKED = True
_JSON_WORDS = {"true": True, "false": False, "null": None}


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    raise ValueError("a call's function is not a name")


def _value(node: ast.expr) -> Any:
    if isinstance(node, ast.Name) and node.id in _JSON_WORDS:
        return _JSON_WORDS[node.id]
    if isinstance(node, ast.List):
        return [_value(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _value(k) if k else None: _value(v) for k, v in zip(node.keys, node.values, strict=True)
        }
    return ast.literal_eval(node)


def read_body(body: str) -> list[ToolCall]:
    try:
        tree = ast.parse(body, mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"the calls are not a Python list ({exc.msg})") from None
    if not isinstance(tree, ast.List) or not tree.elts:
        raise ValueError("the calls are not a Python list of calls")
    calls = []
    for node in tree.elts:
        if not isinstance(node, ast.Call) or node.args:
            raise ValueError("an item is not a call with keyword arguments")
        arguments = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise ValueError("a call unpacks its arguments (**)")
            arguments[keyword.arg] = _value(keyword.value)
        calls.append(ToolCall(_name(node.func), arguments))
    return calls


def extract_calls(
    text: str, tools: Tools = None, truncated: bool = False
) -> tuple[tuple[ToolCall, ...], str, tuple[str, ...], tuple[str, ...]]:
    """(calls, content, call spans, errors) for raw text; markup is removed from content."""
    return extract_between(text, tool_call_start, tool_call_end, read_body, truncated)
