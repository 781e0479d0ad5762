"""``mlx_lm.server``'s parsing in the releases before ``TextStateMachine`` (before 0.32).

Those servers split the reply on its markers, each a token of its own: the tokenizer wrapper's
``tool_call_start`` / ``tool_call_end`` (and ``think_start`` / ``think_end``). 0.31.1 and older
compare each generated token's text with them (``handle_completion``: ``gen.text ==
ctx.tool_call_start``) and parse the collected tool texts with ``tokenizer.tool_parser``, any
exception failing the request; 0.31.2-0.31.3 match the same markers as token sequences
(``SequenceStateMachine``), a think start opens reasoning midway too, and their
``ToolCallFormatter`` drops a call whose parser raises ``ValueError`` (as today's does).

A reply is replayed as pieces (``mlx_lm_server`` and ``mlx_lm_stream`` do it with these):
the streamed one as its detokenizer segments (one per token, as the server saw them), the whole
one and corpus text cut at the markers (what a marker being one token means). A reply that
stops on EOS loses its last streamed chunk's content, as those servers' ``segment = ""`` did.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Formatter = Callable[[list[str]], list[Mapping[str, Any]]]


def has_text_state_machine() -> bool:
    """Whether the installed mlx-lm splits replies with ``TextStateMachine`` (0.32 on)."""
    # by name: ``mlx_lm.generate`` as an attribute is the package's generate() function
    return hasattr(importlib.import_module("mlx_lm.generate"), "TextStateMachine")


def has_formatter() -> bool:
    """Whether the installed server has ``ToolCallFormatter`` (0.31.2 on)."""
    return hasattr(importlib.import_module("mlx_lm.server"), "ToolCallFormatter")


@dataclass(frozen=True)
class Markers:
    """The marker texts of a reply; ``think`` None when the model does not think; an empty
    ``tool_end`` when a call runs to the end of the reply."""

    tool_start: str
    tool_end: str = ""
    think: tuple[str, str] | None = None
    think_midway: bool = True  # a think start in normal text opens reasoning (0.31.2 on)

    @classmethod
    def of(cls, tokenizer: Any) -> Markers:
        """A live ``TokenizerWrapper``'s markers."""
        start, end = getattr(tokenizer, "think_start", None), getattr(tokenizer, "think_end", None)
        return cls(
            str(tokenizer.tool_call_start or ""),
            str(tokenizer.tool_call_end or ""),
            (str(start), str(end)) if tokenizer.has_thinking and start and end else None,
            has_formatter(),
        )

    def all(self) -> tuple[str, ...]:
        found = (self.tool_start, self.tool_end, *(self.think or ()))
        return tuple(m for m in found if m)


def marker_pieces(text: str, markers: Sequence[str]) -> list[str]:
    """``text`` cut so that each marker occurrence is a piece of its own."""
    present = sorted({m for m in markers if m}, key=len, reverse=True)
    if not present:
        return [text] if text else []
    pattern = "(" + "|".join(re.escape(m) for m in present) + ")"
    return [p for p in re.split(pattern, text) if p]


def collect(
    pieces: Sequence[str], markers: Markers, initial: str, keep_last_text: bool = True
) -> tuple[str, str, list[str]]:
    """The server's loop over the pieces: (content, reasoning, tool texts)."""
    state, content, reasoning, tool_text = initial, "", "", ""
    tool_texts: list[str] = []
    last = len(pieces) - 1
    for at, piece in enumerate(pieces):
        if state == "reasoning":
            if markers.think and piece == markers.think[1]:
                state = "normal"
            else:
                reasoning += piece
        elif state == "tool":
            if markers.tool_end and piece == markers.tool_end:
                tool_texts.append(tool_text)
                state, tool_text = "normal", ""
            else:
                tool_text += piece
        elif markers.tool_start and piece == markers.tool_start:
            state = "tool"
        elif markers.think_midway and markers.think and piece == markers.think[0]:
            state = "reasoning"
        elif keep_last_text or at != last:
            content += piece
    if state == "tool" and tool_text:
        tool_texts.append(tool_text)
    return content, reasoning, tool_texts


def formatter(parse: Callable[..., Any], tools: Sequence[Mapping[str, Any]] | None) -> Formatter:
    """The server's tool-call formatting: its ``ToolCallFormatter`` where it has one, else
    0.31.1's ``parse_tools`` (no exception caught)."""
    server = importlib.import_module("mlx_lm.server")
    listed = list(tools) if tools else None
    if hasattr(server, "ToolCallFormatter"):
        made: Formatter = server.ToolCallFormatter(parse, listed)
        return made

    def parse_tools(tool_texts: list[str]) -> list[Mapping[str, Any]]:
        result: list[Mapping[str, Any]] = []
        for tool_text in tool_texts:
            parsed = parse(tool_text, listed)
            for call in parsed if isinstance(parsed, list) else [parsed]:
                call = dict(call)
                call["arguments"] = json.dumps(call["arguments"], ensure_ascii=False)
                result.append({"function": call, "type": "function"})
        return result

    return parse_tools


def initial_state(tokenizer: Any, prompt: Sequence[int]) -> str:
    """ "reasoning" when the prompt left a think block open (0.31.1 looks for the ids)."""
    if not tokenizer.has_thinking:
        return "normal"
    start, end = tokenizer.think_start_id, tokenizer.think_end_id
    for token in reversed(list(prompt)):
        if token == end:
            return "normal"
        if token == start:
            return "reasoning"
    return "normal"
