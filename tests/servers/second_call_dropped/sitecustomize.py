"""Planted into mlx_lm.server (``PYTHONPATH`` = this folder): a chat answer keeps only its first
tool call, streamed and not, as a server that joins or loses the second of two calls in one turn
does (mlx-lm#1170, 0.31.2, lost both). The answer is otherwise right: ``finish_reason:
"tool_calls"``, arguments a JSON string, the streamed call equal to the non-streamed one, no
markup in the content; only the count held to the model's own tokens sees it.

The server runs as ``python -m mlx_lm.server`` (``__main__``, not ``mlx_lm.server``), so the
plant is in the Hermes parser it loads (``json_tools.parse_tool_call``, taken at model load):
the second and later calls parsed with one request's ``tools`` (the same list object: one
request) parse to no call, which the server's formatter leaves out."""

from __future__ import annotations

from typing import Any


def _install() -> None:
    try:
        from mlx_lm.tool_parsers import json_tools
    except ImportError:  # not the server's interpreter
        return
    parse = json_tools.parse_tool_call
    last: dict[str, Any] = {}  # the last request's tools (kept alive: its identity is the key)

    def first_call_only(text: str, tools: Any = None) -> Any:
        parsed = parse(text, tools)
        if tools is None:  # not a chat request with tools
            return parsed
        if last.get("tools") is tools:
            return []  # a later call of the same request: dropped
        last["tools"] = tools
        return parsed

    json_tools.parse_tool_call = first_call_only


_install()
