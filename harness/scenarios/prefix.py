"""Where two sequences part, and what a prefix cache holding one can serve of the other: the
rule every prompt-cache scenario (text sessions, image turns) and the engines' answer
comparison share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def common_prefix(a: Sequence[T], b: Sequence[T]) -> int:
    """How many items ``a`` and ``b`` share from the start (tokens, or characters of text)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def reusable_tokens(held: Sequence[int], prompt: Sequence[int]) -> int:
    """Tokens of ``prompt`` a cache holding ``held`` can serve: their common prefix, at most
    all but the last (something must be processed to get the next token)."""
    return min(common_prefix(held, prompt), max(len(prompt) - 1, 0))
