"""The harness's own reference parser for Mistral's calls (mlx-lm's ``mistral``).

Two forms follow ``[TOOL_CALLS]``: a JSON list of ``{"name", "arguments"}`` objects
(Mistral-7B-Instruct-v0.3), or ``name[ARGS]{...}`` (Mistral-Small 3.2, Devstral, Magistral),
one per ``[TOOL_CALLS]``. No end marker: a call is closed by the end of its JSON (the end of
turn in the model's tokens). Text before the first marker is the content.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.toolcalls.model import ToolCall

tool_call_start = "[TOOL_CALLS]"
tool_call_end = ""

Tools = Sequence[Mapping[str, Any]] | None
# a body carries markup of its own (``NAME[ARGS]{...}``): one whose opening marker a server took as
# its tool state's start is still a call (:func:`harness.toolcalls.own_reading.read_own_calls`)
BODY_MARKED = True
ARGS = "[ARGS]"


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the arguments are not JSON ({exc.msg})") from None
    return value


def read_body(body: str) -> list[ToolCall]:
    decoder = json.JSONDecoder()
    if body.startswith("["):
        try:
            value, _ = decoder.raw_decode(body)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the calls are not a JSON list ({exc.msg})") from None
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(i, dict) and isinstance(i.get("name"), str) for i in items):
            raise ValueError("a call is not an object with a name")
        return [ToolCall(i["name"], _arguments(i.get("arguments", {}))) for i in items]
    name, marker, rest = body.partition(ARGS)
    if not marker or not name.strip():
        raise ValueError("the call is not NAME[ARGS]{...}")
    try:
        arguments, _ = decoder.raw_decode(rest.lstrip())
    except json.JSONDecodeError as exc:
        raise ValueError(f"the arguments are not JSON ({exc.msg})") from None
    return [ToolCall(name.strip(), arguments)]


def extract_calls(
    text: str, tools: Tools = None, truncated: bool = False
) -> tuple[tuple[ToolCall, ...], str, tuple[str, ...], tuple[str, ...]]:
    """(calls, content, call spans, errors) for raw text; markup is removed from content."""
    parts = text.split(tool_call_start)
    calls: list[ToolCall] = []
    errors: list[str] = []
    for body in parts[1:]:
        try:
            calls.extend(read_body(body.strip()))
        except ValueError as exc:
            cut = " (cut off by the token limit)" if truncated and body is parts[-1] else ""
            errors.append(f"ValueError: {exc}{cut}")
    return tuple(calls), parts[0].strip(), tuple(parts[1:]), tuple(errors)
