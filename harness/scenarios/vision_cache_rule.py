"""The image rule of a single-slot prefix cache (what a chat engine keeps between turns).

A cache slot holds the token ids it was filled with and a digest of each image in them. A new
prompt may reuse the slot's longest common token prefix only when

- every image whose placeholder tokens lie in that prefix is the same image (same digest):
  placeholder tokens say where an image goes, not which one, so two images of one size give
  identical token ids and a token-only comparison reuses the old image's keys and values;
- the rest of the prompt (the suffix to process) holds no image placeholder: the vision
  features are merged into the embeddings of the whole prompt at once, so an image cannot be
  appended to a cached prefix;
- at least one prompt token is left to process (the first generated token needs its logits).

Pure functions of token ids and digests: no mlx, no model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from harness.scenarios.prefix import reusable_tokens


class ReuseVerdict(str, Enum):
    REUSE = "reuse"
    EMPTY = "empty"  # nothing cached, or no common prefix
    IMAGE_CHANGED = "image_changed"  # an image in the common prefix differs
    IMAGE_IN_SUFFIX = "image_in_suffix"  # a new image would have to be appended


@dataclass(frozen=True)
class CacheSlot:
    """What the slot was filled with: token ids and one digest per image, in prompt order."""

    tokens: tuple[int, ...]
    image_digests: tuple[str, ...]


@dataclass(frozen=True)
class ReuseDecision:
    verdict: ReuseVerdict
    prefix_tokens: int  # tokens of the slot to keep (0 unless REUSE)
    reason: str  # one line


def image_digest(image: Any) -> str:
    """sha256 of an image's pixels, mode and size (a ``PIL.Image.Image``)."""
    digest = hashlib.sha256(f"{image.mode}:{image.size}".encode())
    digest.update(image.tobytes())
    return digest.hexdigest()


def image_spans(tokens: Sequence[int], image_ids: Iterable[int]) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of image placeholder tokens, end exclusive."""
    ids = frozenset(image_ids)
    spans: list[tuple[int, int]] = []
    start: int | None = None
    for i, token in enumerate(tokens):
        if token in ids and start is None:
            start = i
        elif token not in ids and start is not None:
            spans.append((start, i))
            start = None
    if start is not None:
        spans.append((start, len(tokens)))
    return spans


def decide(
    slot: CacheSlot | None,
    tokens: Sequence[int],
    image_digests: Sequence[str],
    image_ids: Iterable[int],
) -> ReuseDecision:
    """Whether (and how much of) ``slot`` a prompt of ``tokens`` with these images may reuse."""
    ids = frozenset(image_ids)
    if slot is None:
        return ReuseDecision(ReuseVerdict.EMPTY, 0, "nothing cached")
    prefix = reusable_tokens(slot.tokens, tokens)
    if prefix <= 0:
        return ReuseDecision(ReuseVerdict.EMPTY, 0, "no common prefix")
    spans = image_spans(tokens, ids)
    inside = [i for i, (start, _end) in enumerate(spans) if start < prefix]
    for i in inside:
        old = slot.image_digests[i] if i < len(slot.image_digests) else None
        new = image_digests[i] if i < len(image_digests) else None
        if old is None or new is None or old != new:
            return ReuseDecision(
                ReuseVerdict.IMAGE_CHANGED,
                0,
                f"image {i + 1} in the cached prefix changed (same placeholder tokens, "
                "other pixels): reusing it would answer about the old image",
            )
    if any(end > prefix for _start, end in spans):
        return ReuseDecision(
            ReuseVerdict.IMAGE_IN_SUFFIX,
            0,
            "an image lies past the cached prefix: its features cannot be appended to a cache",
        )
    return ReuseDecision(ReuseVerdict.REUSE, prefix, f"reuse {prefix} of {len(tokens)} tokens")
