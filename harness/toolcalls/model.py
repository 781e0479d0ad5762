"""The frozen values the tool-call corpus layer passes around (pydantic stays at the file edge)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

FinishReason = Literal["stop", "length"]


class ParserOwner(str, Enum):
    """Who owns a parser implementation."""

    MLX_LM = "mlx_lm"
    MLX_VLM = "mlx_vlm"
    HARNESS = "harness"  # the harness's own reference parsers, for formats mlx-lm lacks


@dataclass(frozen=True)
class ToolCall:
    """One call: a function name and its decoded JSON arguments (normally an object)."""

    name: str
    arguments: Any

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class KnownBroken:
    """A real parser bug recorded against a case: it is reported, but does not fail the run."""

    reason: str
    link: str
    backends: tuple[ParserOwner, ...] | None = (
        None  # None: every implementation of the case's parser
    )

    def applies_to(self, backend: ParserOwner) -> bool:
        return self.backends is None or backend in self.backends


@dataclass(frozen=True)
class CorpusCase:
    """One corpus line: raw model output and the calls a correct parser returns."""

    id: str
    parser: str
    text: str
    expected: tuple[ToolCall, ...]
    source: str  # "file:line", for messages
    tools: tuple[Mapping[str, Any], ...] | None = None
    note: str = ""
    known_broken: tuple[KnownBroken, ...] = ()
    finish_reason: FinishReason = "stop"
    starts_in_reasoning: bool = False
    markup_in_content_ok: bool = False

    def known_broken_for(self, backend: ParserOwner) -> KnownBroken | None:
        return next((k for k in self.known_broken if k.applies_to(backend)), None)


@dataclass(frozen=True)
class Extraction:
    """What a backend made of raw text: the calls a client receives, and the text around them."""

    calls: tuple[ToolCall, ...]
    content: str
    reasoning: str = ""
    tool_texts: tuple[str, ...] = ()  # the spans handed to parse_tool_call
    errors: tuple[str, ...] = ()  # parse failures the server swallowed (call dropped)
    crash: str = ""  # an exception the server does not catch: the whole request fails
