"""A session replayed in process, with the prompt cache an engine built on mlx-lm or mlx-vlm
keeps between turns: one cache, trimmed back to what the next prompt shares with it.

Per turn: the prompt through the chat template (with the session's tools); the tokens the
cache holds that the prompt starts with are reused (the cache trimmed to them; a cache that
cannot be trimmed is replaced by an empty one, and the turn says why); the rest is prefilled
and ``max_tokens`` are generated greedily, timed. With ``check_identical`` the same prompt is
then answered from an empty cache: the tokens must be the same, and its time to first token is
the turn's cold figure. After each turn the cache must hold exactly the tokens we count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from harness.backends.base import PromptCaching
from harness.core.visible_text import visible
from harness.scenarios.prefix import common_prefix, reusable_tokens
from harness.scenarios.session.reuse import TurnResult, TurnReuse, history_departure
from harness.scenarios.session.script import Session, template_messages
from harness.scenarios.token_timing import Stamped, stamped


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def shown(model: PromptCaching, token: int | None) -> str:
    if token is None:
        return "(end)"
    return f'{token} "{visible(model.decode([token]), 30)}"'


class LocalReplay:
    """One replay of ``session`` through ``model`` with one cache kept across its turns."""

    def __init__(
        self, model: PromptCaching, session: Session, *, max_tokens: int, check_identical: bool
    ) -> None:
        self.model = model
        self.session = session
        self.max_tokens = max_tokens
        self.check_identical = check_identical
        self.cache: Any = model.make_cache()
        self.held: list[int] = []  # the tokens the cache holds
        self.previous: list[int] | None = None

    def prompt(self, turn: int) -> list[int]:
        messages = template_messages(self.session.prompt(turn))
        return self.model.chat_tokens(messages, tools=list(self.session.tools) or None)

    def turn(self, turn: int, cold_first: bool) -> TurnResult:
        prompt = self.prompt(turn)
        departure = None if self.previous is None else history_departure(self.previous, prompt)
        reusable = reusable_tokens(self.held, prompt)
        parted = self._parted(prompt) if turn else None
        reused, miss_reason, fault = self._reuse(reusable)
        cold = self._cold(prompt) if self.check_identical and cold_first else None
        warm = stamped(
            self.model.generate_cached(self.cache, prompt[reused:], max_tokens=self.max_tokens)
        )
        if self.check_identical and cold is None:
            cold = self._cold(prompt)
        held = self.model.cache_offset(self.cache)
        self.held = (prompt + list(warm.tokens))[:held]
        self.previous = prompt
        identical, differs = self._same(warm.tokens, cold.tokens) if cold else (None, None)
        return TurnResult(
            turn=turn + 1,
            kind=self.session.turn_kind(turn),
            reuse=TurnReuse(len(prompt), reusable, reused),
            ttft_s=_finite(warm.ttft_s),
            decode_tps=_finite(warm.decode_tps),
            answer=self.model.decode(warm.tokens),
            cold_ttft_s=_finite(cold.ttft_s) if cold else None,
            identical=identical,
            differs_at=differs,
            departure=departure,
            departure_text=self._departure_text(departure),
            miss_reason=miss_reason,
            cache_fault=fault,
            parted_at=parted,
        )

    def _reuse(self, reusable: int) -> tuple[int, str | None, str | None]:
        """Trim the cache to the ``reusable`` tokens: (tokens reused, why not more, what is
        wrong with the cache)."""
        held = self.model.cache_offset(self.cache)
        if held <= reusable:
            return held, None, None
        why = self.model.untrimmable(self.cache)
        if why is not None:
            self.cache = self.model.make_cache()
            self.held = []
            return 0, why, None
        self.model.trim(self.cache, held - reusable)
        after = self.model.cache_offset(self.cache)
        if after != reusable:  # the cache holds what we did not leave in it
            return reusable, None, f"trimmed to {reusable} tokens, the cache holds {after}"
        return reusable, None, None

    def _parted(self, prompt: list[int]) -> str | None:
        """Where the cache's tokens and this prompt part (None: the cache is all prompt)."""
        at = common_prefix(self.held, prompt)
        if at >= len(self.held):
            return None
        new = prompt[at] if at < len(prompt) else None
        return (
            f"token {at}: the cache holds {shown(self.model, self.held[at])}, the prompt has "
            f"{shown(self.model, new)}"
        )

    def _cold(self, prompt: list[int]) -> Stamped:
        fresh = self.model.make_cache()
        return stamped(self.model.generate_cached(fresh, prompt, max_tokens=self.max_tokens))

    def _same(self, warm: Sequence[int], cold: Sequence[int]) -> tuple[bool, str | None]:
        at = common_prefix(warm, cold)
        if at == len(warm) == len(cold):
            return True, None
        with_cache = warm[at] if at < len(warm) else None
        without = cold[at] if at < len(cold) else None
        return False, (
            f"token {at}: with the cache {shown(self.model, with_cache)}, without it "
            f"{shown(self.model, without)}"
        )

    def _departure_text(self, departure: Any) -> str | None:
        if departure is None:
            return None
        return (
            f"token {departure.position}: the previous prompt had "
            f"{shown(self.model, departure.previous)}, this one has "
            f"{shown(self.model, departure.new)}"
        )
