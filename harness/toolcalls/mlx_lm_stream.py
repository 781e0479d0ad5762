"""Generated token ids -> what a streaming ``mlx_lm.server`` client receives, token by token.

The text arrives as ``stream_generate`` yields it: one streaming-detokenizer segment per token,
then the finalized rest with the finish reason. Each chunk goes through the server's own loop
(``handle_completion`` in server.py): the text state machine splits it, finished tool texts
are handed to a streaming ``ToolCallFormatter`` whenever the state is not "tool", and the last
chunk carries whatever is left. On ``finish_reason == "stop"`` the server discards the final
chunk's text, as it does here. A client concatenates the content deltas and collects the
``tool_calls`` of every chunk; that is the :class:`Extraction` returned. Under an mlx-lm without
the text state machine (before 0.32) the chunks go through that release's loop instead
(:mod:`harness.toolcalls.mlx_lm_legacy`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.toolcalls import mlx_lm_legacy as legacy
from harness.toolcalls.mlx_lm_server import quiet, recording, replay_legacy, wire_calls
from harness.toolcalls.model import Extraction, FinishReason


def stream_chunks(
    tokenizer: Any, tokens: Sequence[int], finish_reason: FinishReason
) -> list[tuple[str, str | None]]:
    """(text, finish_reason) for each response ``stream_generate`` yields for ``tokens``
    (the EOS token itself excluded, as it is never detokenized)."""
    detokenizer = tokenizer.detokenizer  # a fresh copy, reset
    chunks: list[tuple[str, str | None]] = []
    last = len(tokens) - 1
    for index, token in enumerate(tokens):
        detokenizer.add_token(int(token))
        if finish_reason == "length" and index == last:
            break  # generate.py adds the last token, then finalizes
        chunks.append((detokenizer.last_segment, None))
    detokenizer.finalize()
    chunks.append((detokenizer.last_segment, finish_reason))
    return chunks


def extract_stream(
    tokenizer: Any,
    tokens: Sequence[int],
    tools: Sequence[Mapping[str, Any]] | None,
    finish_reason: FinishReason,
    initial: str = "normal",
) -> Extraction:
    """Replay the server's streaming response for generated ``tokens``."""
    if not legacy.has_text_state_machine():
        pieces = [text for text, _ in stream_chunks(tokenizer, tokens, finish_reason)]
        markers = legacy.Markers.of(tokenizer)
        keep = finish_reason != "stop"  # the server empties the last chunk on EOS
        return replay_legacy(pieces, markers, tokenizer.tool_parser, tools, initial, keep)
    from mlx_lm.generate import TextStateMachine, make_text_state_machine
    from mlx_lm.server import ToolCallFormatter

    machine = make_text_state_machine(tokenizer)
    errors: list[str] = []
    formatter = ToolCallFormatter(
        recording(tokenizer.tool_parser, errors), list(tools) if tools else None, True
    )
    state = machine.make_state(initial)
    prev_state: str | None = initial
    text = reasoning_text = tool_text = ""
    content = reasoning = ""
    pending: list[str] = []
    seen_texts: list[str] = []
    formatted: list[Mapping[str, Any]] = []
    try:
        with quiet():
            for chunk, finish in stream_chunks(tokenizer, tokens, finish_reason):
                if finish == "stop":
                    state, current_state = TextStateMachine.discard(state)
                    segments = [(current_state, "")]
                elif finish == "length":
                    state, segments = TextStateMachine.split(state, chunk)
                    state, flushed, current_state = TextStateMachine.flush(state)
                    segments.append((current_state, flushed))
                else:
                    state, segments = TextStateMachine.split(state, chunk)
                for current_state, clean_text in segments:
                    if current_state == "reasoning":
                        reasoning_text += clean_text
                    elif current_state == "tool":
                        tool_text += clean_text
                    elif current_state == "normal":
                        if prev_state == "tool":
                            pending.append(tool_text)
                            tool_text = ""
                        text += clean_text
                    prev_state = current_state
                if current_state != "tool" and (text or pending or reasoning_text):
                    seen_texts.extend(pending)
                    formatted.extend(formatter(pending))
                    content, reasoning = content + text, reasoning + reasoning_text
                    text = reasoning_text = ""
                    pending = []
            if prev_state == "tool" and tool_text:
                pending.append(tool_text)
            seen_texts.extend(pending)
            formatted.extend(formatter(pending))
    except Exception as exc:  # escapes the server's handler: the stream breaks off
        return Extraction(
            (),
            content + text,
            reasoning + reasoning_text,
            tuple(seen_texts),
            tuple(errors),
            crash=f"{type(exc).__name__}: {exc}",
        )
    calls = wire_calls(formatted)
    return Extraction(
        calls, content + text, reasoning + reasoning_text, tuple(seen_texts), tuple(errors)
    )
