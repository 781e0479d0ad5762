"""The sizes of a tiny transformer, shared by the hand-made zoo families and the derivations:
hidden 64, 2 layers, 4 query heads of 16, 2 KV heads; a mixture of experts of 4, 2 per token."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

DENSE: Mapping[str, int] = MappingProxyType(
    {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
    }
)
EXPERTS: Mapping[str, int] = MappingProxyType(
    {"moe_intermediate_size": 32, "num_experts": 4, "num_experts_per_tok": 2}
)
VOCAB = 512  # a derived model's vocabulary (a hand-made family's is its tokenizer's)
POSITIONS = 4096  # max_position_embeddings
