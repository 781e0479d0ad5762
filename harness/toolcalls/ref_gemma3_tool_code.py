"""The harness's own reference parser for Gemma 3 ```tool_code``` calls (mlx-lm has none).

Gemma 3 has no tool tokens: its prompts render tools as Python signatures and the model answers
with a fenced block, one call per line, results coming back as ```tool_output```::

    ```tool_code
    get_weather(city="Paris", unit="celsius")
    ```

Accepted call forms: keyword (``f(a=1)``), positional (``f("Paris")``, named from the order of
the tool's schema properties), ``print(...)`` and module prefixes (``print(default_api.f(a=1))``),
and shell style (``f Paris --unit celsius``, ``f --city=Paris``, ``f city=Paris``). Values are
Python or JSON literals; shell-style values are typed from the schema, else decoded as JSON when
they are JSON, else kept as text. A block cut off by the token limit is not a call.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from harness.toolcalls.model import ToolCall
from harness.toolcalls.schema import coerce_text, parameter_names, parameter_schema

tool_call_start = "```tool_code"
tool_call_end = "```"

_BLOCK = re.compile(r"```tool_code[ \t]*\n?(.*?)(```|\Z)", re.DOTALL)
_JSON_NAMES = {"true": True, "false": False, "null": None}
_IDENT = re.compile(r"[A-Za-z_][\w.]*")

Tools = Sequence[Mapping[str, Any]] | None


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("dict unpacking is not a value")
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    value = ast.literal_eval(node)
    if isinstance(value, (set, frozenset, bytes, complex)):
        raise ValueError(f"{type(value).__name__} is not a JSON value")
    return value


def _callee(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):  # default_api.get_weather -> get_weather
        return func.attr
    raise ValueError("the callee is not a name")


def _name_positional(name: str, values: list[Any], tools: Tools) -> dict[str, Any]:
    if not values:
        return {}
    names = parameter_names(name, tools)
    if len(values) > len(names):
        raise ValueError(f"{name}: {len(values)} positional arguments, schema names {len(names)}")
    return dict(zip(names, values, strict=False))


def _python_call(node: ast.expr, tools: Tools) -> ToolCall:
    if not isinstance(node, ast.Call):
        raise ValueError("not a call")
    if _callee(node.func) == "print" and len(node.args) == 1 and not node.keywords:
        return _python_call(node.args[0], tools)
    name = _callee(node.func)
    arguments = _name_positional(name, [_literal(a) for a in node.args], tools)
    for keyword in node.keywords:
        if keyword.arg is None:
            raise ValueError("**kwargs is not an argument")
        arguments[keyword.arg] = _literal(keyword.value)
    return ToolCall(name, arguments)


def _shell_value(name: str, key: str, raw: str, tools: Tools) -> Any:
    return coerce_text(raw, parameter_schema(name, key, tools))


def _shell_call(line: str, tools: Tools) -> ToolCall:
    tokens = shlex.split(line)
    if not tokens or not _IDENT.fullmatch(tokens[0]):
        raise ValueError(f"not a call: {line!r}")
    name = tokens[0].rsplit(".", 1)[-1]
    arguments: dict[str, Any] = {}
    positional: list[str] = []
    rest = tokens[1:]
    while rest:
        token = rest.pop(0)
        if token.startswith("--"):
            key, eq, value = token[2:].partition("=")
            if not eq:
                value = rest.pop(0) if rest and not rest[0].startswith("--") else "true"
            arguments[key.replace("-", "_")] = _shell_value(name, key, value, tools)
        elif re.fullmatch(r"[A-Za-z_]\w*=.*", token, re.DOTALL):
            key, _, value = token.partition("=")
            arguments[key] = _shell_value(name, key, value, tools)
        else:
            positional.append(token)
    for key, raw in _name_positional(name, positional, tools).items():
        arguments[key] = _shell_value(name, key, raw, tools)
    return ToolCall(name, arguments)


def parse_block(body: str, tools: Tools = None) -> list[ToolCall]:
    """The calls in one block's body; raises ValueError when any statement is not a call."""
    try:
        module = ast.parse(body.strip())
    except SyntaxError:
        module = None
    if module is not None:
        calls = []
        for statement in module.body:
            if not isinstance(statement, ast.Expr):
                raise ValueError("a statement that is not a call")
            calls.append(_python_call(statement.value, tools))
        return calls
    return [_shell_call(line, tools) for line in body.splitlines() if line.strip()]


def parse_tool_call(text: str, tools: Tools = None) -> dict[str, Any] | list[dict[str, Any]]:
    """mlx-lm's parser shape: a block body (or a whole block) -> a call dict or a list of them."""
    match = _BLOCK.search(text)
    calls = parse_block(match.group(1) if match else text, tools)
    if not calls:
        raise ValueError("No function provided.")
    dicts = [c.as_json() for c in calls]
    return dicts[0] if len(dicts) == 1 else dicts


def extract_calls(
    text: str, tools: Tools = None, truncated: bool = False
) -> tuple[tuple[ToolCall, ...], str, tuple[str, ...], tuple[str, ...]]:
    """(calls, content, block bodies, errors) for raw text; blocks are removed from the content."""
    calls: list[ToolCall] = []
    errors: list[str] = []
    bodies: list[str] = []
    for match in _BLOCK.finditer(text):
        bodies.append(match.group(1))
        if truncated and not match.group(2):
            errors.append("ValueError: tool_code block cut off by the token limit")
            continue
        try:
            calls.extend(parse_block(match.group(1), tools))
        except (ValueError, SyntaxError, TypeError) as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    content = _BLOCK.sub("", text).strip()
    return tuple(calls), content, tuple(bodies), tuple(errors)


__all__ = ["extract_calls", "parse_block", "parse_tool_call", "tool_call_end", "tool_call_start"]
