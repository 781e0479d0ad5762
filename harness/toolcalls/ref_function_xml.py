"""The harness's own reference parser for ``<function=name><parameter=k>v`` XML calls.

The Qwen3-Coder markup as llama.cpp's server accepts it, which mlx-lm's ``qwen3_coder`` does not:
the ``<tool_call>`` wrapper is optional and so is every closing tag::

    <function=get_weather>
    <parameter=city>
    Paris
    <parameter=unit>
    celsius

A value ends at a ``</parameter>`` before the next ``<parameter=``/``<function=`` (the first one
followed by a tag or the end, so a value may hold ``</parameter>`` or ``</function>``), else at
the next tag; a function ends at ``</function>``, at text that is not a parameter, or at the
end. One newline around a value is markup. Values are typed from the tool schema when it
declares a type, otherwise decoded as JSON when they are JSON, otherwise kept as text. A
function still open when the token limit cut the output is not a call.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from harness.toolcalls.model import ToolCall
from harness.toolcalls.schema import coerce_text, parameter_schema

tool_call_start = "<function="
tool_call_end = "</function>"

Tools = Sequence[Mapping[str, Any]] | None

_START = "<function="
_PARAM = "<parameter="
_CLOSE = "</parameter>"
_AFTER_CLOSE = (_PARAM, _START, "</function>", "</tool_call>")
_WRAPPER = re.compile(r"</?tool_call>")


def _find(text: str, marker: str, start: int) -> int:
    at = text.find(marker, start)
    return len(text) if at < 0 else at


def _value(raw: str, closed: bool) -> str:
    value = raw[1:] if raw.startswith("\n") else raw
    if closed:
        return value[:-1] if value.endswith("\n") else value
    return value.rstrip()


def _closing(text: str, start: int, following: int) -> int:
    """The ``</parameter>`` that closes a value starting at ``start``, or -1.

    The markup has no escaping, so a value may hold ``</parameter>`` itself: the closing one is
    the first followed by the next tag (or the end), else simply the first."""
    candidates = []
    at = text.find(_CLOSE, start)
    while 0 <= at < following:
        candidates.append(at)
        at = text.find(_CLOSE, at + 1)
    for at in candidates:
        tail = text[at + len(_CLOSE) :].lstrip()
        if not tail or tail.startswith(_AFTER_CLOSE):
            return at
    return candidates[0] if candidates else -1


def _scan_parameter(text: str, at: int) -> tuple[str, str, bool, int]:
    """(key, raw value, closed, end) for the ``<parameter=`` at ``at``.

    A value ends at its ``</parameter>`` when one comes before the next parameter or function
    (so a closed value may hold ``</function>``), else at the first closing or opening tag."""
    key_end = _find(text, ">", at)
    key = text[at + len(_PARAM) : key_end]
    start = min(key_end + 1, len(text))
    following = min(_find(text, _PARAM, start), _find(text, _START, start))
    close = _closing(text, start, following)
    if close >= 0:
        return key, text[start:close], True, close + len(_CLOSE)
    end = min(following, _find(text, "</function>", start), _find(text, "</tool_call>", start))
    return key, text[start:end], False, end


def _scan_function(text: str, at: int, tools: Tools) -> tuple[str, dict[str, Any], bool, int]:
    """(name, arguments, closed, end) for the ``<function=`` at ``at``."""
    name_end = _find(text, ">", at)
    name = text[at + len(_START) : name_end].strip().strip("\"'")
    position = min(name_end + 1, len(text))
    arguments: dict[str, Any] = {}
    while True:
        stripped = len(text) - len(text[position:].lstrip())
        if text.startswith(_PARAM, stripped):
            key, raw, closed, position = _scan_parameter(text, stripped)
            key = key.strip().strip("\"'")
            if not key:
                raise ValueError(f"{name}: a <parameter=> with no name")
            arguments[key] = coerce_text(_value(raw, closed), parameter_schema(name, key, tools))
            continue
        if text.startswith("</function>", stripped):
            return name, arguments, True, stripped + len("</function>")
        return name, arguments, False, position


def extract_calls(
    text: str, tools: Tools = None, truncated: bool = False
) -> tuple[tuple[ToolCall, ...], str, tuple[str, ...], tuple[str, ...]]:
    """(calls, content, function spans, errors) for raw text; markup is removed from content."""
    calls: list[ToolCall] = []
    errors: list[str] = []
    spans: list[str] = []
    content: list[str] = []
    position = 0
    while (at := text.find(_START, position)) >= 0:
        content.append(text[position:at])
        try:
            name, arguments, closed, position = _scan_function(text, at, tools)
        except ValueError as exc:
            errors.append(f"ValueError: {exc}")
            position = _find(text, "</function>", at + 1)
            continue
        spans.append(text[at:position])
        if not name:
            errors.append("ValueError: a <function=> with no name")
        elif truncated and not closed and not text[position:].strip():
            errors.append("ValueError: function cut off by the token limit")
        else:
            calls.append(ToolCall(name, arguments))
    content.append(text[position:])
    return tuple(calls), _WRAPPER.sub("", "".join(content)).strip(), tuple(spans), tuple(errors)


def parse_tool_call(text: str, tools: Tools = None) -> dict[str, Any] | list[dict[str, Any]]:
    """mlx-lm's parser shape: text holding one or more functions -> a call dict or a list."""
    calls, _, _, errors = extract_calls(text, tools)
    if errors:
        raise ValueError(errors[0])
    if not calls:
        raise ValueError("No function provided.")
    dicts = [c.as_json() for c in calls]
    return dicts[0] if len(dicts) == 1 else dicts


__all__ = ["extract_calls", "parse_tool_call", "tool_call_end", "tool_call_start"]
