"""What one speculative request is judged by: how much of the draft the model accepted, and
where (if anywhere) its greedy output parts from the model's own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Acceptance:
    """Draft tokens the model accepted, of those the draft proposed, in one request."""

    accepted: int
    drafted: int

    @property
    def rate(self) -> float:
        """accepted / drafted (NaN when nothing was drafted)."""
        return self.accepted / self.drafted if self.drafted else float("nan")


def acceptance(from_draft: Sequence[bool], num_draft_tokens: int, max_tokens: int) -> Acceptance:
    """The draft's acceptance, rebuilt from each token's ``from_draft`` flag.

    Speculative decoding goes in rounds: the draft proposes ``min(num_draft_tokens, tokens
    still to make)`` tokens, the model keeps the longest prefix it agrees with (flagged from
    the draft), then gives one token of its own (not flagged) unless ``max_tokens`` is reached.
    """
    accepted = drafted = 0
    index = 0
    while index < len(from_draft):
        proposed = max(min(num_draft_tokens, max_tokens - index), 0)
        drafted += proposed
        kept = 0
        while kept < proposed and index < len(from_draft) and from_draft[index]:
            kept += 1
            index += 1
        accepted += kept
        index += 1  # the model's own token that ends the round
    return Acceptance(accepted, drafted)


@dataclass(frozen=True)
class Mismatch:
    """The first position where two greedy outputs differ (None: one output ended there)."""

    position: int
    without_draft: int | None
    with_draft: int | None


def first_mismatch(without_draft: Sequence[int], with_draft: Sequence[int]) -> Mismatch | None:
    """Where the output with the draft first differs from the output without (None: same)."""
    for position, (ours, theirs) in enumerate(zip(without_draft, with_draft, strict=False)):
        if ours != theirs:
            return Mismatch(position, ours, theirs)
    if len(without_draft) == len(with_draft):
        return None
    shorter = min(len(without_draft), len(with_draft))
    return Mismatch(
        shorter,
        without_draft[shorter] if shorter < len(without_draft) else None,
        with_draft[shorter] if shorter < len(with_draft) else None,
    )
