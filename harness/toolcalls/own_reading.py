"""A model's own tokens read for calls by the harness's reference parsers, never by a release's.

Whether a model called a tool must not depend on the release under test: a release whose server
drops a call may drop it from everything it returns, and an older release may lack the parser
or parse differently. The template's markup names the format (mlx-lm 0.32.2's inference rules,
:data:`harness.probe.toolrules.TEMPLATE_RULES`, applied to the template text); the format's
reader (:attr:`harness.toolcalls.formats.Format.own_reader`, a ``ref_*`` module here) reads the
text, after reasoning is taken out. A server may take a call's opening marker as the start of
its tool state and return only the rest (mlx-lm 0.31.2 returns ``get_weather[ARGS]{...}``
without ``[TOOL_CALLS]``, in the text and in the token ids alike): where the format's body
carries markup of its own (the reader's ``BODY_MARKED``), a text without the opener is read
again with it put back.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.probe.toolrules import TEMPLATE_RULES
from harness.toolcalls.formats import Format, get_format
from harness.toolcalls.model import ToolCall
from harness.toolcalls.reference import extract


@dataclass(frozen=True)
class OwnReading:
    """The calls the harness reads in a model's text, and by which format's reader."""

    format: str
    reader: str  # harness.toolcalls.<module>
    calls: tuple[ToolCall, ...]
    errors: tuple[str, ...]  # markup that did not parse (a call the model got wrong)
    opener_missing: str = ""  # the opening marker put back to read the calls ("": none was)


def template_format(template: str) -> Format | None:
    """The format a chat template's markup names (the first rule whose markers all appear)."""
    for markers, name in TEMPLATE_RULES:
        if all(marker in template for marker in markers):
            return get_format(name)
    return None


def read_own_calls(
    template: str, text: str, tools: Sequence[Mapping[str, Any]] | None = None
) -> OwnReading | None:
    """The calls in ``text`` as the harness reads the template's markup; None when the
    template names no format, or one the harness has no reader for."""
    fmt = template_format(template)
    if fmt is None or fmt.own_reader is None:
        return None
    found = extract(fmt.own_reader, fmt.dialect, text, tools)
    reading = OwnReading(fmt.name, fmt.own_reader, found.calls, found.errors)
    opener = fmt.markup[0]
    marked = getattr(
        importlib.import_module(f"harness.toolcalls.{fmt.own_reader}"), "BODY_MARKED", False
    )
    if found.calls or not marked or opener in text or not text.strip():
        return reading
    again = extract(fmt.own_reader, fmt.dialect, opener + text.lstrip(), tools)
    if not again.calls:
        return reading
    return OwnReading(fmt.name, fmt.own_reader, again.calls, again.errors, opener)


def shown_call(call: ToolCall) -> str:
    """``get_weather(city='Paris')``: a call in one line."""
    arguments = call.arguments if isinstance(call.arguments, Mapping) else {}
    inside = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return f"{call.name}({inside})"
