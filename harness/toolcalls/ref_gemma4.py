"""The harness's own reference parser for Gemma 4's calls:
``<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>`` (mlx-lm's ``gemma4``).

The arguments are JSON with bare keys and ``<|"|>`` for a string's quotes (a string may hold
braces, commas and colons). A body may hold several ``call:`` items, one after another.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from harness.toolcalls.model import ToolCall
from harness.toolcalls.ref_delimited import extract_between

tool_call_start = "<|tool_call>"
tool_call_end = "<tool_call|>"

Tools = Sequence[Mapping[str, Any]] | None
# a body carries markup of its own (``call:NAME{...}``): one whose opening marker a server took as
# its tool state's start is still a call (:func:`harness.toolcalls.own_reading.read_own_calls`)
BODY_MARKED = True
QUOTE = '<|"|>'
_STRING = re.compile(re.escape(QUOTE) + r"(.*?)" + re.escape(QUOTE), re.DOTALL)
_BARE_KEY = re.compile(r"([{,]\s*)([A-Za-z_][\w.-]*)\s*:")
_CALL = re.compile(r"call:([\w.-]+)\s*")


def as_json(arguments: str) -> str:
    """Gemma 4's argument text as JSON: strings quoted, bare keys quoted."""
    strings: list[str] = []

    def hold(match: re.Match[str]) -> str:
        strings.append(match.group(1))
        return f"\x00{len(strings) - 1}\x00"

    held = _BARE_KEY.sub(r'\1"\2":', _STRING.sub(hold, arguments))
    return re.sub(r"\x00(\d+)\x00", lambda m: json.dumps(strings[int(m.group(1))]), held)


def _object_end(text: str) -> int:
    """The index after the ``}`` that closes the object ``text`` starts with (strings between
    ``<|"|>`` skipped); raises ValueError when it is not closed."""
    depth = 0
    position = 0
    while position < len(text):
        if text.startswith(QUOTE, position):
            close = text.find(QUOTE, position + len(QUOTE))
            if close < 0:
                break
            position = close + len(QUOTE)
            continue
        depth += {"{": 1, "}": -1}.get(text[position], 0)
        position += 1
        if depth == 0:
            return position
    raise ValueError("the arguments' braces are not closed")


def read_body(body: str) -> list[ToolCall]:
    calls = []
    position = 0
    while position < len(body):
        match = _CALL.match(body, position)
        if match is None or not body.startswith("{", match.end()):
            raise ValueError("a call is not call:NAME{...}")
        end = match.end() + _object_end(body[match.end() :])
        try:
            arguments = json.loads(as_json(body[match.end() : end]))
        except json.JSONDecodeError as exc:
            raise ValueError(f"the arguments do not parse ({exc.msg})") from None
        calls.append(ToolCall(match.group(1), arguments))
        position = len(body) - len(body[end:].lstrip(", \n"))
    return calls


def extract_calls(
    text: str, tools: Tools = None, truncated: bool = False
) -> tuple[tuple[ToolCall, ...], str, tuple[str, ...], tuple[str, ...]]:
    """(calls, content, call spans, errors) for raw text; markup is removed from content."""
    return extract_between(text, tool_call_start, tool_call_end, read_body, truncated)
