"""The zoo's families: one tiny configuration per architecture the suites cover."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from harness.models.zoo.templates import CHATML_SPECIAL_TOKENS, CHATML_TOOLS


@dataclass(frozen=True)
class Family:
    """A tiny random-weight model of one architecture family."""

    name: str
    backend: str
    config: Mapping[str, Any]
    chat_template: str
    special_tokens: tuple[str, ...]
    bos_token: str | None
    eos_token: str
    expected_parser: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)


VOCAB_SIZE = 512

LLAMA = Family(
    name="llama",
    backend="mlx_lm",
    config=MappingProxyType(
        {
            "model_type": "llama",
            "architectures": ["LlamaForCausalLM"],
            "hidden_size": 64,
            "num_hidden_layers": 2,
            "intermediate_size": 128,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "rms_norm_eps": 1e-5,
            "vocab_size": VOCAB_SIZE,
            "max_position_embeddings": 4096,
            "rope_theta": 10000.0,
            "tie_word_embeddings": True,
        }
    ),
    chat_template=CHATML_TOOLS,
    special_tokens=CHATML_SPECIAL_TOKENS,
    bos_token=None,
    eos_token="<|im_end|>",
    expected_parser="json_tools",
    tags=("text", "chat", "tiny", "random"),
)

FAMILIES: Mapping[str, Family] = MappingProxyType({f.name: f for f in (LLAMA,)})
