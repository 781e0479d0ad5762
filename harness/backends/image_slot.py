"""The interface of a single-slot prefix cache over chat turns with images (what a chat engine
keeps between turns), for the ``vision_prompt_cache`` scenario.

A slot is opaque to scenarios: the backend fills it with the turn it generated (prompt and
reply) and, on the next turn, reuses the longest common token prefix as its own code does.
The scenario decides with :mod:`harness.scenarios.vision_cache_rule` whether the slot may be
offered at all, from :meth:`ImageSlotCaching.slot_tokens` and the images it holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from harness.backends.base import ImageInput


@dataclass(frozen=True)
class SlotReply:
    """One greedy reply: tokens, seconds to the first one (the processor, the vision encoder
    and the prefill of what the slot did not hold), prompt tokens taken from the slot, prompt
    tokens in all, and the first token's log-probabilities (a numpy float32 vector)."""

    tokens: tuple[int, ...]
    ttft_s: float
    cached_tokens: int
    prompt_tokens: int
    first_logprobs: Any = field(default=None, repr=False, compare=False)


@runtime_checkable
class ImageSlotCaching(ImageInput, Protocol):
    """Chat turns whose user messages hold ``{"type": "image"}`` content parts (one per image,
    in the order of ``images``), generated through one reusable slot."""

    def image_token_ids(self) -> frozenset[int]:
        """The placeholder token ids images become in the prompt."""
        ...

    def chat_prompt_ids(
        self, messages: Sequence[Mapping[str, Any]], images: Sequence[Any]
    ) -> list[int]:
        """The prompt's token ids as the backend's processor makes them."""
        ...

    def new_slot(self) -> Any: ...

    def slot_tokens(self, slot: Any) -> tuple[int, ...]:
        """What the slot holds now (the last turn's prompt and reply)."""
        ...

    def slot_untrimmable(self, slot: Any) -> str | None:
        """None when the slot can be cut back to a shorter prefix, else why not (one line)."""
        ...

    def slot_cache_types(self, slot: Any) -> list[str]: ...

    def generate_in_slot(
        self,
        slot: Any | None,
        messages: Sequence[Mapping[str, Any]],
        images: Sequence[Any],
        *,
        max_tokens: int,
        max_kv_size: int | None = None,
    ) -> SlotReply:
        """Greedy reply; ``slot`` None is a cold request that keeps nothing; a slot is reused
        as far as the backend's own prefix matching goes, then holds this turn."""
        ...
