"""Where two outputs first part: token sequences (the prompt-cache scenarios' check that a cached
run gives the uncached run's tokens) and texts (the served scenarios' reason lines)."""

from __future__ import annotations


def first_mismatch(a: list[int], b: list[int]) -> int:
    """Index of the first differing token, or -1 when equal."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return -1 if len(a) == len(b) else min(len(a), len(b))


def first_difference(a: str, b: str) -> int:
    """The first character position where ``a`` and ``b`` differ (the shorter's length when
    one is a prefix of the other)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def differ_at(a: str, b: str) -> str:
    """``differ at character N (lengths A and B)``: where two texts part, without their text."""
    return f"differ at character {first_difference(a, b)} (lengths {len(a)} and {len(b)})"
