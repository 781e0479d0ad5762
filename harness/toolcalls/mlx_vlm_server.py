"""Raw generated text -> (content, reasoning, tool calls) as ``mlx_vlm.server`` does it.

The non-streamed chat completion path of mlx-vlm 0.7.10 (server/openai.py): reasoning and content
come from ``_split_thinking`` on the whole text; ``process_tool_calls`` (tools/extractor.py) runs
on the whole text too, reasoning included; when it finds calls, the content is rebuilt from its
``remaining_text`` through ``_split_thinking`` and ``strip_protocol_markers``. The extractor
catches every exception a parser raises (the call is dropped with a logged warning, which the
scorer collects). mlx-vlm parses calls only when the request carries ``tools``; the scorer
assumes it does and passes the case's tools (or None). Thinking markers come from environment
variables there; unset, mlx-vlm tries its default pairs, as here.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from harness.toolcalls.model import Extraction, ToolCall


class _Capture(logging.Handler):
    """Collects the warnings the extractor logs for each call it drops."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _captured(name: str) -> Iterator[list[str]]:
    logger = logging.getLogger(name)
    capture = _Capture()
    propagate, logger.propagate = logger.propagate, False
    logger.addHandler(capture)
    try:
        yield capture.messages
    finally:
        logger.removeHandler(capture)
        logger.propagate = propagate


def _decode(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return arguments  # the client gets a string it cannot decode


def extract(
    module_name: str,
    text: str,
    tools: Sequence[Mapping[str, Any]] | None = None,
    starts_in_reasoning: bool = False,
) -> Extraction:
    from mlx_vlm.server.responses_state import _split_thinking, strip_protocol_markers
    from mlx_vlm.tools import load_tool_module, process_tool_calls

    module = load_tool_module(module_name)
    reasoning, content = _split_thinking(text, None, None, starts_in_reasoning)
    with _captured("mlx_vlm.server") as errors:
        result = process_tool_calls(text, module, list(tools) if tools else None)
    if result.calls:
        _, clean = _split_thinking(result.remaining_text or "", None, None)
        content = strip_protocol_markers(clean, module, None, None) or ""
    calls = tuple(
        ToolCall(str(c["function"]["name"]), _decode(c["function"]["arguments"]))
        for c in result.calls
    )
    tool_texts = _tool_spans(text, module.tool_call_start, module.tool_call_end)
    return Extraction(calls, content, reasoning or "", tool_texts, tuple(errors))


def _tool_spans(text: str, start: str, end: str) -> tuple[str, ...]:
    """The spans the extractor hands to the parser (for the failure report only)."""
    if start not in text:
        return ()
    closing = re.escape(end) if end else r"(?:\n|$)"
    pattern = re.compile(f"{re.escape(start)}(.*?){closing}", re.DOTALL)
    return tuple(pattern.findall(text))
