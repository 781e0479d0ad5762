"""Raw text -> Extraction with the harness's reference parsers (formats mlx-lm lacks).

A correct server takes reasoning out first and looks for calls only in what is left, so markup
drafted inside a think block is never a call.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

from harness.toolcalls.formats import Dialect
from harness.toolcalls.model import Extraction, FinishReason


def split_reasoning(text: str, dialect: Dialect, starts_in_reasoning: bool) -> tuple[str, str]:
    """(reasoning, the rest) for the dialect's think markers."""
    if dialect.think is None:
        return "", text
    start, end = dialect.think
    reasoning: list[str] = []
    rest: list[str] = []
    position = 0
    inside = starts_in_reasoning
    while position < len(text):
        marker = end if inside else start
        at = text.find(marker, position)
        stop = len(text) if at < 0 else at
        (reasoning if inside else rest).append(text[position:stop])
        position = stop + len(marker) if at >= 0 else len(text)
        inside = not inside if at >= 0 else inside
    return "".join(reasoning).strip(), "".join(rest)


def extract(
    module_name: str,
    dialect: Dialect,
    text: str,
    tools: Sequence[Mapping[str, Any]] | None = None,
    finish_reason: FinishReason = "stop",
    starts_in_reasoning: bool = False,
) -> Extraction:
    module = importlib.import_module(f"harness.toolcalls.{module_name}")
    reasoning, rest = split_reasoning(text, dialect, starts_in_reasoning)
    calls, content, spans, errors = module.extract_calls(
        rest, tools, truncated=finish_reason == "length"
    )
    return Extraction(calls, content, reasoning, spans, errors)
