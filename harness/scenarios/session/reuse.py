"""What a turn of a session could take from the prompt cache and what it took, in tokens.

- ``reusable`` (:func:`harness.scenarios.prefix.reusable_tokens`): the tokens a prefix cache
  holding the previous turn (its prompt and the answer it generated) has in common with this
  turn's prompt, counted from the start; at most the prompt less one token (something must be
  processed to get the next token).
- ``reused``: what the engine took from its cache (our own accounting in process; the server's
  ``cached_tokens`` over HTTP).
- a **miss** is a turn that reused fewer than ``reusable`` less the slack: the cache had the
  prefix and did not use it;
- a **rewritten history** is a turn whose prompt departs from the previous turn's prompt before
  that prompt's end: the chat template rendered the earlier conversation differently (Qwen3
  drops ``<think>`` blocks from past turns), so no prefix cache can reuse past that token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.scenarios.prefix import common_prefix


@dataclass(frozen=True)
class Departure:
    """Where this turn's prompt leaves the previous turn's prompt: the token position and the
    token each has there (``previous`` None: the previous prompt ended there)."""

    position: int
    previous: int
    new: int | None


def history_departure(previous: Sequence[int], prompt: Sequence[int]) -> Departure | None:
    """None when ``previous`` is a prefix of ``prompt`` (the history was kept as it was)."""
    shared = common_prefix(previous, prompt)
    if shared >= len(previous):
        return None
    return Departure(shared, previous[shared], prompt[shared] if shared < len(prompt) else None)


@dataclass(frozen=True)
class TurnReuse:
    """One turn's prompt in tokens: all of it, what a cache could serve, what it served."""

    prompt: int
    reusable: int
    reused: int | None  # None: the engine did not say

    @property
    def new(self) -> int | None:
        """Tokens processed for this turn (the prompt less what came from the cache)."""
        return None if self.reused is None else self.prompt - self.reused

    @property
    def reuse_share(self) -> float | None:
        """Reused / reusable (None when nothing was reusable or the engine did not say)."""
        if self.reused is None or self.reusable <= 0:
            return None
        return min(self.reused / self.reusable, 1.0)

    @property
    def cached_share(self) -> float | None:
        """Reused / the whole prompt."""
        if self.reused is None or self.prompt <= 0:
            return None
        return self.reused / self.prompt

    def missed(self, slack: int) -> bool:
        """The cache could have served more than ``slack`` tokens beyond what it served."""
        return self.reused is not None and self.reusable - self.reused > slack


@dataclass(frozen=True)
class TurnResult:
    """One request of a session replay: its reuse, its times and its checks."""

    turn: int  # 1-based
    kind: str  # what it answers: "user" or "tool"
    reuse: TurnReuse
    ttft_s: float | None
    decode_tps: float | None
    answer: str  # the model's text (untrusted: escaped by whatever shows it)
    cold_ttft_s: float | None = None  # the same prompt without the cache
    identical: bool | None = None  # same answer without the cache (None: not checked)
    differs_at: str | None = None  # where the answers part, one line
    departure: Departure | None = None
    departure_text: str | None = None  # the departure's tokens shown, one line
    miss_reason: str | None = None  # why the cache could not be used, when known
    cache_fault: str | None = None  # the cache does not hold what it should, one line
    parted_at: str | None = None  # where the cache's tokens and the prompt part, one line

    @property
    def prefill_tps(self) -> float | None:
        """New prompt tokens / time to the first token."""
        new = self.reuse.new
        if new is None or not self.ttft_s or self.ttft_s <= 0:
            return None
        return new / self.ttft_s
