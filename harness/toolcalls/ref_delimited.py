"""Calls between a start and an end marker, each read by a format's own body reader.

The shared scan of the harness's reference parsers whose markup wraps each call (or each list of
calls) in two markers: Hermes ``<tool_call>{...}</tool_call>``, LFM2's ``<|tool_call_start|>
[f(x=1)]<|tool_call_end|>``, Gemma 4's ``<|tool_call>call:f{...}<tool_call|>``. A body with no
end marker runs to the end of the text (the end of turn closed it), unless the token limit cut
it off: then it is no call. Text outside the markers is the content.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.toolcalls.model import ToolCall

BodyReader = Callable[[str], list[ToolCall]]  # raises ValueError for a body that does not parse


def extract_between(
    text: str, start: str, end: str, read: BodyReader, truncated: bool
) -> tuple[tuple[ToolCall, ...], str, tuple[str, ...], tuple[str, ...]]:
    """(calls, content, call spans, errors) for raw text."""
    calls: list[ToolCall] = []
    content: list[str] = []
    spans: list[str] = []
    errors: list[str] = []
    position = 0
    while (at := text.find(start, position)) >= 0:
        content.append(text[position:at])
        body_at = at + len(start)
        close = text.find(end, body_at)
        body = text[body_at : close if close >= 0 else len(text)]
        position = close + len(end) if close >= 0 else len(text)
        spans.append(body)
        if close < 0 and truncated:
            errors.append("ValueError: call cut off by the token limit")
            continue
        try:
            calls.extend(read(body.strip()))
        except ValueError as exc:
            errors.append(f"ValueError: {exc}")
    content.append(text[position:])
    return tuple(calls), "".join(content).strip(), tuple(spans), tuple(errors)
