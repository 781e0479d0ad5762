"""Reasoning told apart from the answer, and each part timed: in process from the generated
token ids and the tokenizer's think markers, over HTTP from the stream's reasoning field
(``reasoning_content``, or ``reasoning`` as mlx_lm.server sends it) or, where the server leaves
``<think>...</think>`` in the content (llama-server ``--reasoning-format none``), from that
markup, split here.

The first token of any kind is the first piece of either part; the first answer token is the
first answer piece with visible text (the blank line after ``</think>`` is not yet an answer).
Each part's decode rate is (its tokens - the first piece's) / (its last piece - its first), as
:class:`~harness.backends.openai_client.TokenArrivals` defines it; marker tokens count in
neither part, as servers drop them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from harness.backends.base import ThinkMarkers
from harness.backends.openai_client import Chunk, TokenArrivals, piece_arrivals
from harness.toolcalls.formats import THINK

Counter = Callable[[str], int] | None


class Split(str, enum.Enum):
    """How reasoning was told apart from the answer."""

    FIELD = "field"  # the server sent it apart (reasoning_content / reasoning)
    MARKUP = "markup"  # the server left <think> markup in the content, split here
    TOKENS = "tokens"  # in process: the think marker tokens
    NONE = "none"  # no reasoning seen at all


@dataclass(frozen=True)
class Parts:
    """One answer's reasoning and answer parts, timed from the request (seconds)."""

    reasoning: TokenArrivals
    answer: TokenArrivals
    first_any_s: float | None
    first_answer_s: float | None
    split: Split
    # no think block was left open: its end marker came, or the server moved on from its
    # reasoning field to content
    closed: bool
    field: str | None = None  # the reasoning field's name, when the server sent one

    def as_dict(self) -> dict[str, object]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 6)

        return {
            "split": self.split.value,
            "field": self.field,
            "closed": self.closed,
            "first_any_s": r(self.first_any_s),
            "first_answer_s": r(self.first_answer_s),
            "reasoning_tokens": self.reasoning.tokens,
            "answer_tokens": self.answer.tokens,
            "reasoning_tps": r(self.reasoning.decode_tps()),
            "answer_tps": r(self.answer.decode_tps()),
        }


def _first(pieces: Sequence[tuple[float, str]], *, visible: bool) -> float | None:
    return next((t for t, p in pieces if (p.strip() if visible else p)), None)


def _markup_regions(content: str) -> tuple[tuple[int, int] | None, int, bool]:
    """Where the reasoning lies in ``content`` (start, end), where the answer starts, and
    whether the block closed; (None, 0, True) when there is no think markup."""
    start_text, end_text = THINK
    opened = content.find(start_text)
    closed_at = content.find(end_text, opened + 1 if opened >= 0 else 0)
    if opened < 0 and closed_at < 0:
        return None, 0, True
    begin = opened + len(start_text) if opened >= 0 else 0  # opened in the prompt: from 0
    if closed_at < 0:
        return (begin, len(content)), len(content), False
    return (begin, closed_at), closed_at + len(end_text), True


def served_parts(chunks: Sequence[Chunk], count: Counter) -> Parts:
    """The reasoning and answer of a streamed chat answer, from its reasoning field or, where
    the content carries think markup, from that."""
    field_name: str | None = None
    field_pieces: list[tuple[float, str]] = []
    content_pieces: list[tuple[float, str]] = []
    for chunk in chunks:
        for name in ("reasoning_content", "reasoning"):
            value = chunk.delta.get(name)
            if isinstance(value, str) and value:
                field_name = field_name or name
        if chunk.reasoning:
            field_pieces.append((chunk.t_s, chunk.reasoning))
        if chunk.text:
            content_pieces.append((chunk.t_s, chunk.text))
    content = "".join(p for _, p in content_pieces)
    region, answer_from, closed = _markup_regions(content)
    reasoning_pieces = list(field_pieces)
    answer_pieces: list[tuple[float, str]] = []
    at = 0
    for t, piece in content_pieces:
        lo, hi = at, at + len(piece)
        at = hi
        if region is not None:
            a, b = max(lo, region[0]), min(hi, region[1])
            if a < b:
                reasoning_pieces.append((t, content[a:b]))
        a = max(lo, answer_from)
        if a < hi:
            answer_pieces.append((t, content[a:hi]))
    reasoning_pieces.sort(key=lambda p: p[0])
    split = Split.FIELD if field_pieces else Split.MARKUP if region is not None else Split.NONE
    if field_pieces and not answer_pieces:  # the server never moved on from reasoning
        closed = False
    firsts = [t for t in (_first(reasoning_pieces, visible=False),) if t is not None]
    firsts += [t for t in (_first(answer_pieces, visible=False),) if t is not None]
    return Parts(
        piece_arrivals(reasoning_pieces, count),
        piece_arrivals(answer_pieces, count),
        min(firsts) if firsts else None,
        _first(answer_pieces, visible=True),
        split,
        closed,
        field_name,
    )


def _at(tokens: Sequence[int], i: int, marker: Sequence[int]) -> bool:
    return bool(marker) and tuple(tokens[i : i + len(marker)]) == tuple(marker)


def token_parts(
    tokens: Sequence[int],
    stamps: Sequence[float],
    markers: ThinkMarkers,
    *,
    opened: bool,
    decode: Callable[[Sequence[int]], str],
    eos: Collection[int] = (),
) -> Parts:
    """The reasoning and answer of generated ``tokens`` (ready at ``stamps``), split at the
    think markers as mlx_lm.server splits them; ``opened``: the prompt left a block open."""
    inside = opened
    seen_block = opened
    reasoning: list[tuple[float, str]] = []
    answer: list[tuple[float, str]] = []
    i = 0
    while i < len(tokens):
        if not inside and _at(tokens, i, markers.start):
            inside = seen_block = True
            i += len(markers.start)
            continue
        if inside and _at(tokens, i, markers.end):
            inside = False
            i += len(markers.end)
            continue
        if tokens[i] not in eos:
            part = reasoning if inside else answer
            part.append((stamps[i], decode([tokens[i]]) or " "))  # a token counts, text or not
        i += 1
    first_any = stamps[0] if stamps else None
    ones = [
        TokenArrivals(tuple(t for t, _ in part), tuple(1 for _ in part), "tokenizer")
        for part in (reasoning, answer)
    ]
    return Parts(
        ones[0],
        ones[1],
        first_any,
        _first(answer, visible=True),
        Split.TOKENS if seen_block else Split.NONE,
        not inside,
    )


def prompt_opens_block(prompt: Sequence[int], markers: ThinkMarkers) -> bool:
    """Whether the prompt ends inside a think block (its last start after its last end), so
    generation starts in reasoning, as mlx_lm.server judges it."""

    def last(marker: Sequence[int]) -> int:
        n = len(marker)
        hits = [i for i in range(len(prompt) - n + 1) if _at(prompt, i, marker)]
        return hits[-1] if hits else -1

    return last(markers.start) > last(markers.end)
