"""Draft models of the zoo: smaller models over a zoo family's very tokenizer, for speculative
decoding (the ``speculative`` scenario drafts with one and verifies with the family's model).

Kept apart from :data:`harness.models.zoo.families.FAMILIES` (whose table tests and family
matrices hold one row per architecture): a draft is a size of an architecture, not one. A draft
keeps its target's special tokens, BOS/EOS and ``vocab_size``, so the trained tokenizer is the
same token for token; it has no chat template (a draft reads what the target templated).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

from harness.models.zoo.families_text import LLAMA
from harness.models.zoo.family import Family, frozen, plain

_LLAMA_DRAFT_SIZES = {
    "hidden_size": 32,
    "num_hidden_layers": 1,
    "intermediate_size": 64,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 16,
    "tie_word_embeddings": False,  # its own output head: it guesses, and is sometimes wrong
}

LLAMA_DRAFT = dataclasses.replace(
    LLAMA,
    name="llama-draft",
    config=frozen({**plain(LLAMA.config), **_LLAMA_DRAFT_SIZES}),
    chat_template=None,
    expected_parser=None,
    content_bearing=False,
    tags=("text", "tiny", "random", "draft"),
    notes="a draft for zoo/llama: its tokenizer, half its width, one layer",
)

DRAFT_FAMILIES: Mapping[str, Family] = MappingProxyType({LLAMA_DRAFT.name: LLAMA_DRAFT})
"""Each draft by name; ``zoo/<name>`` in the catalog."""
