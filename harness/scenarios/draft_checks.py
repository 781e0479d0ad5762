"""What one speculative request is judged by: how much of the draft the model accepted, and
where (if anywhere) its greedy output parts from the model's own; and the artifacts both
speculative scenarios (``speculative``, ``http_speculative``) record of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.core.visible_text import visible
from harness.scenarios.artifacts import ScenarioArtifacts

if TYPE_CHECKING:
    from harness.backends.base import LoadedModel


@dataclass(frozen=True)
class SpeculativeArtifacts(ScenarioArtifacts):
    """What ``speculative`` and ``http_speculative`` record beside their metrics."""

    draft: str | None = None  # the draft model (its label, or the server's draft path)
    num_draft_tokens: int | None = None  # in process: tokens the draft proposes a round
    engine: str | None = None  # over HTTP: the server's engine
    # over HTTP: how the undrafted baseline was measured ({"same server, per request": body})
    # or why there was none ("none: ...")
    baseline: str | dict[str, Any] | None = None
    acceptance_source: str | None = None  # over HTTP: where the counts came from
    accepted_tokens: tuple[int | None, ...] = ()  # per measured run (None: not reported)
    drafted_tokens: tuple[int | None, ...] = ()
    first_mismatch: dict[str, Any] | None = None  # the first run whose output changed

    @staticmethod
    def total(counts: tuple[int | None, ...]) -> int | None:
        """The sum of the reported counts; None when none was reported."""
        found = [c for c in counts if c is not None]
        return sum(found) if found else None

    @property
    def unchecked_baseline(self) -> str | None:
        """Why greedy output was not compared (no undrafted baseline), or None."""
        if isinstance(self.baseline, str) and self.baseline.startswith("none"):
            return self.baseline
        return None


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


def shown_token(model: LoadedModel, token: int | None) -> str:
    """``id "text"`` with the text escaped (model output is untrusted); ``end`` for none."""
    if token is None:
        return "end of output"
    return f'{token} "{visible(model.decode([token]), 40)}"'
