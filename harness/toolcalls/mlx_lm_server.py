"""Raw generated text -> (content, reasoning, tool calls) exactly as ``mlx_lm.server`` does it.

Uses mlx-lm's own pieces: ``make_text_state_machine`` and ``TextStateMachine`` (generate.py) to
split the text into normal / reasoning / tool segments, the collection loop of
``ResponseHandler.handle_completion`` (server.py) to gather tool texts, and the real
``ToolCallFormatter`` (server.py) to parse them. The formatter swallows ``ValueError`` and
``JSONDecodeError`` (the call is silently dropped); any other exception escapes and fails the
request, which is recorded as ``crash``.

``extract`` replays corpus text with a tokenizer described by a :class:`Dialect`; ``extract_text``
does the same with a live model's own ``TokenizerWrapper`` (its inferred parser and markers).
Under an mlx-lm without ``TextStateMachine`` (before 0.32) both replay that release's own loop
instead (:mod:`harness.toolcalls.mlx_lm_legacy`).
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from harness.toolcalls import mlx_lm_legacy as legacy
from harness.toolcalls.formats import Dialect
from harness.toolcalls.model import Extraction, FinishReason, ToolCall


@dataclass(frozen=True)
class _TokenizerView:
    """The attributes of mlx-lm's ``TokenizerWrapper`` that ``make_text_state_machine`` reads."""

    has_thinking: bool
    think_start: str | None
    think_end: str | None
    has_tool_calling: bool
    tool_call_start: str
    tool_call_end: str
    structural_markers: tuple[str, ...]
    response_transitions: Mapping[str, list[tuple[str, str]]]
    response_initial_state: str | None


def _tokenizer_view(module: Any, dialect: Dialect) -> _TokenizerView:
    response: Mapping[str, Any] = {}
    if dialect.response_format:
        templates = importlib.import_module(f"mlx_lm.chat_templates.{dialect.response_format}")
        response = getattr(templates, "RESPONSE_FORMAT", None) or {}
    think = dialect.think
    return _TokenizerView(
        has_thinking=think is not None,
        think_start=think[0] if think else None,
        think_end=think[1] if think else None,
        has_tool_calling=True,
        tool_call_start=module.tool_call_start,
        tool_call_end=module.tool_call_end,
        structural_markers=dialect.structural_markers,
        response_transitions=response.get("transitions", {}),
        response_initial_state=response.get("initial_state"),
    )


def _segments(
    view: Any, text: str, finish_reason: FinishReason, initial: str
) -> list[tuple[str | None, str]]:
    from mlx_lm.generate import TextStateMachine, make_text_state_machine

    machine = make_text_state_machine(view)
    state = machine.make_state(initial)
    state, segments = TextStateMachine.split(state, text)
    if finish_reason == "length":
        state, flushed, current = TextStateMachine.flush(state)
        segments.append((current, flushed))
    else:  # the stop token's text is never split; the held-back buffer is discarded
        state, current = TextStateMachine.discard(state)
        segments.append((current, ""))
    return list(segments)


def initial_state(tokenizer: Any, prompt: Sequence[int]) -> str:
    """The state the server starts the reply in (server.py ``_tokenize``): "reasoning" when
    the prompt left a think block open, or the response format's own initial state."""
    if not hasattr(tokenizer, "rfind_think_start"):  # 0.31.1 and older
        return legacy.initial_state(tokenizer, prompt)
    tokens = list(prompt)
    initial = "normal"
    if tokenizer.has_thinking and (
        tokenizer.rfind_think_start(tokens) > tokenizer.rfind_think_end(tokens)
    ):
        initial = "reasoning"
    return str(getattr(tokenizer, "response_initial_state", None) or initial)


def _collect(
    initial: str, segments: Sequence[tuple[str | None, str]]
) -> tuple[str, str, list[str]]:
    """The loop in ``handle_completion``: (content, reasoning, tool texts)."""
    text = reasoning = tool_text = ""
    tool_calls: list[str] = []
    prev_state: str | None = initial
    for current_state, clean_text in segments:
        if current_state == "reasoning":
            reasoning += clean_text
        elif current_state == "tool":
            tool_text += clean_text
        elif current_state == "normal":
            if prev_state == "tool":
                tool_calls.append(tool_text)
                tool_text = ""
            text += clean_text
        prev_state = current_state
    if prev_state == "tool" and tool_text:
        tool_calls.append(tool_text)
    return text, reasoning, tool_calls


@contextmanager
def quiet() -> Iterator[None]:
    """The formatter logs each dropped call as a warning; the scorer reports them instead."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(previous)


def recording(parse: Callable[..., Any], errors: list[str]) -> Callable[..., Any]:
    def parse_and_record(text: str, tools: Any) -> Any:
        try:
            return parse(text, tools)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            raise

    return parse_and_record


def wire_calls(formatted: Sequence[Mapping[str, Any]]) -> tuple[ToolCall, ...]:
    """What a client gets: ``function.arguments`` is a JSON string it decodes."""
    calls = []
    for item in formatted:
        function = item["function"]
        calls.append(ToolCall(str(function["name"]), json.loads(function["arguments"])))
    return tuple(calls)


def replay_legacy(
    pieces: Sequence[str],
    markers: legacy.Markers,
    parse: Callable[..., Any],
    tools: Sequence[Mapping[str, Any]] | None,
    initial: str = "normal",
    keep_last_text: bool = True,
) -> Extraction:
    """What a client of a server before ``TextStateMachine`` receives for a reply's pieces."""
    content, reasoning, tool_texts = legacy.collect(pieces, markers, initial, keep_last_text)
    errors: list[str] = []
    try:
        with quiet():
            formatted = legacy.formatter(recording(parse, errors), tools)(tool_texts)
        calls = wire_calls(formatted)
    except Exception as exc:  # escapes the server's handler: the request fails
        crash = f"{type(exc).__name__}: {exc}"
        return Extraction((), content, reasoning, tuple(tool_texts), tuple(errors), crash=crash)
    return Extraction(calls, content, reasoning, tuple(tool_texts), tuple(errors))


def _extract_with(
    view: Any,
    parse: Callable[..., Any],
    text: str,
    tools: Sequence[Mapping[str, Any]] | None,
    finish_reason: FinishReason,
    initial: str,
) -> Extraction:
    from mlx_lm.server import ToolCallFormatter

    content, reasoning, tool_texts = _collect(
        initial, _segments(view, text, finish_reason, initial)
    )
    errors: list[str] = []
    formatter = ToolCallFormatter(recording(parse, errors), list(tools) if tools else None)
    try:
        with quiet():
            formatted = formatter(tool_texts)
    except Exception as exc:  # escapes the server's handler: the request fails
        return Extraction(
            (),
            content,
            reasoning,
            tuple(tool_texts),
            tuple(errors),
            crash=f"{type(exc).__name__}: {exc}",
        )
    return Extraction(wire_calls(formatted), content, reasoning, tuple(tool_texts), tuple(errors))


def extract(
    module_name: str,
    dialect: Dialect,
    text: str,
    tools: Sequence[Mapping[str, Any]] | None = None,
    finish_reason: FinishReason = "stop",
    starts_in_reasoning: bool = False,
) -> Extraction:
    module = importlib.import_module(f"mlx_lm.tool_parsers.{module_name}")
    if not legacy.has_text_state_machine():
        think = dialect.think if dialect.think else None
        markers = legacy.Markers(
            module.tool_call_start, module.tool_call_end or "", think, legacy.has_formatter()
        )
        initial = "reasoning" if starts_in_reasoning and think else "normal"
        pieces = legacy.marker_pieces(text, markers.all())
        return replay_legacy(pieces, markers, module.parse_tool_call, tools, initial)
    view = _tokenizer_view(module, dialect)
    # server.py _tokenize: "reasoning" when the prompt left a think block open.
    initial = "reasoning" if starts_in_reasoning and view.has_thinking else "normal"
    initial = view.response_initial_state or initial
    return _extract_with(view, module.parse_tool_call, text, tools, finish_reason, initial)


def extract_text(
    tokenizer: Any,
    text: str,
    tools: Sequence[Mapping[str, Any]] | None,
    finish_reason: FinishReason,
    initial: str = "normal",
) -> Extraction:
    """The whole generated ``text`` through a live mlx-lm ``TokenizerWrapper``'s own state
    machine and inferred parser (which must not be None)."""
    if not legacy.has_text_state_machine():
        markers = legacy.Markers.of(tokenizer)
        pieces = legacy.marker_pieces(text, markers.all())
        return replay_legacy(pieces, markers, tokenizer.tool_parser, tools, initial)
    return _extract_with(tokenizer, tokenizer.tool_parser, text, tools, finish_reason, initial)
