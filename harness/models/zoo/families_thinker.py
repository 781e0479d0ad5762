"""The zoo's thinker: a tiny model trained to answer with a ``<think>`` block, then the answer.

Kept apart from :data:`harness.models.zoo.families.FAMILIES` (one row per architecture), like
the callers: a thinker is a trained variant of an architecture. ``qwen3-thinker`` is zoo/qwen3
(Qwen3's template and tokenizer, whose ``<think>``/``</think>`` mlx-lm recognises:
``has_thinking``) trained (:mod:`harness.models.zoo.thinking`) to think about the city its
question names, then answer; so the ``reasoning`` scenario times reasoning and answer apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

from harness.models.zoo.families_text import QWEN3
from harness.models.zoo.family import Family

THINKER_TAGS = ("text", "chat", "tiny", "trained", "thinking")

QWEN3_THINKER = dataclasses.replace(
    QWEN3,
    name="qwen3-thinker",
    content_bearing=False,
    thinking=True,
    tags=THINKER_TAGS,
    notes="zoo/qwen3 trained to think: <think> city is in country </think> answer",
)

THINKER_FAMILIES: Mapping[str, Family] = MappingProxyType({QWEN3_THINKER.name: QWEN3_THINKER})
"""Each thinker by name; ``zoo/<name>`` in the catalog."""
