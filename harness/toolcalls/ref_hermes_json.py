"""The harness's own reference parser for Hermes ``<tool_call>{"name": ..., "arguments": ...}
</tool_call>`` calls (Qwen2.5/Qwen3, Hermes fine-tunes: mlx-lm's ``json_tools``).

A body is one JSON object with a ``name`` and ``arguments`` (an object, or a JSON string of
one; ``parameters`` is read as its other name).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.toolcalls.model import ToolCall
from harness.toolcalls.ref_delimited import extract_between

tool_call_start = "<tool_call>"
tool_call_end = "</tool_call>"

Tools = Sequence[Mapping[str, Any]] | None


def read_body(body: str) -> list[ToolCall]:
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the call is not JSON ({exc.msg})") from None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise ValueError("the call is not an object with a name")
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the arguments are not JSON ({exc.msg})") from None
    return [ToolCall(value["name"], arguments)]


def extract_calls(
    text: str, tools: Tools = None, truncated: bool = False
) -> tuple[tuple[ToolCall, ...], str, tuple[str, ...], tuple[str, ...]]:
    """(calls, content, call spans, errors) for raw text; markup is removed from content."""
    return extract_between(text, tool_call_start, tool_call_end, read_body, truncated)
