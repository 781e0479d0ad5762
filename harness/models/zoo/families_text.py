"""Text families (loaded by mlx-lm): tiny configurations of real architectures and templates.

A derived family's ``config`` holds only what makes it that family: the real model's structural
choices the generator's tiny configuration (:func:`~harness.models.zoo.derive_text.tiny_config`,
from the installed mlx-lm's ``ModelArgs``) does not have (norm epsilon, rope base, head_dim,
tied embeddings, sliding-window pattern, conv layers), values the family's tests and notes rely
on, and keys real checkpoints carry that mlx-lm does not read (``architectures``,
``checkpoint_keys``). Sizes come from the generator: hidden 64, 4 query heads of 16, 2 KV heads,
2 layers, 4 experts of which 2 per token. What generation cannot give stays here: the real chat
template, special tokens, BOS/EOS, the tool parser mlx-lm should infer. A family the generator
cannot derive is hand-made, with the reason.
"""

from __future__ import annotations

from typing import Any

from harness.models.zoo import templates as t
from harness.models.zoo.family import VOCAB_SIZE, Family, frozen

TEXT_TAGS = ("text", "chat", "tiny", "random", "content")


def generated(model_type: str) -> dict[str, Any]:
    """The generator's tiny config of ``model_type`` (imports mlx-lm: called when building)."""
    from harness.models.zoo.derive_text import tiny_config

    return tiny_config(model_type)


LLAMA = Family(
    name="llama",
    backend="mlx_lm",
    content_bearing=True,
    config=frozen({"model_type": "llama", "architectures": ["LlamaForCausalLM"]}),
    generator=generated,
    chat_template=t.CHATML_TOOLS,
    special_tokens=t.CHATML_SPECIAL_TOKENS,
    bos_token=None,
    eos_token="<|im_end|>",
    expected_parser="json_tools",
    tags=TEXT_TAGS,
    notes="Llama architecture with a Hermes ChatML template (as Hermes/SmolLM fine-tunes ship); "
    "Meta's own Llama 3.1 template writes bare JSON calls, which mlx-lm does not recognise.",
)

QWEN2 = Family(
    name="qwen2",
    backend="mlx_lm",
    content_bearing=True,
    config=frozen(
        {
            "model_type": "qwen2",
            "architectures": ["Qwen2ForCausalLM"],
            "rms_norm_eps": 1e-6,
            "use_sliding_window": False,
        }
    ),
    generator=generated,
    checkpoint_keys=("use_sliding_window",),
    chat_template=t.QWEN2_5,
    special_tokens=(),
    appended_special_tokens=t.QWEN2_5_SPECIAL_TOKENS,
    bos_token=None,
    eos_token="<|im_end|>",
    token_ids=frozen({"eos_token_id": ("<|im_end|>", "<|endoftext|>")}),
    expected_parser="json_tools",
    tags=TEXT_TAGS,
    notes="Qwen2.5-Instruct: q/k/v biases, tied embeddings, Hermes <tool_call> JSON.",
)

_QWEN3_CONFIG = {
    "head_dim": 32,  # MLX quantizes KV in groups of 32+: lets QuantizedKVCache run on the zoo
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0,
    "attention_bias": False,
}

QWEN3 = Family(
    name="qwen3",
    backend="mlx_lm",
    content_bearing=True,
    config=frozen({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], **_QWEN3_CONFIG}),
    generator=generated,
    checkpoint_keys=("attention_bias",),
    chat_template=t.QWEN3,
    special_tokens=(),
    appended_special_tokens=t.QWEN3_SPECIAL_TOKENS,
    bos_token=None,
    eos_token="<|im_end|>",
    token_ids=frozen({"eos_token_id": ("<|im_end|>", "<|endoftext|>")}),
    expected_parser="json_tools",
    tags=TEXT_TAGS,
    notes="Qwen3 (dense): q/k RMSNorm, explicit head_dim, <think> blocks, Hermes JSON calls. "
    "Qwen3-Coder's XML calls are exercised by the qwen3_moe family.",
)

QWEN3_MOE = Family(
    name="qwen3_moe",
    backend="mlx_lm",
    content_bearing=True,
    config=frozen(
        {
            "model_type": "qwen3_moe",
            "architectures": ["Qwen3MoeForCausalLM"],
            **_QWEN3_CONFIG,
            "norm_topk_prob": True,
        }
    ),
    generator=generated,
    checkpoint_keys=("attention_bias",),
    chat_template=t.QWEN3_CODER,
    special_tokens=(),
    appended_special_tokens=t.QWEN3_CODER_SPECIAL_TOKENS,
    bos_token=None,
    eos_token="<|im_end|>",
    token_ids=frozen({"eos_token_id": ("<|im_end|>", "<|endoftext|>")}),
    expected_parser="qwen3_coder",
    tags=(*TEXT_TAGS, "moe"),
    notes="Mixture of experts as Qwen3-Coder-30B-A3B (4 experts, top-2) with its XML tool calls.",
)

GEMMA3_TEXT = Family(
    name="gemma3_text",
    backend="mlx_lm",
    content_bearing=True,
    config=frozen(
        {
            "model_type": "gemma3_text",
            "architectures": ["Gemma3ForCausalLM"],
            "num_key_value_heads": 1,
            "query_pre_attn_scalar": 16,
            # local then global layers; the window (64) the notes and tests rely on
            "sliding_window": 64,
            "sliding_window_pattern": 2,
            "layer_types": ["sliding_attention", "full_attention"],
            "hidden_activation": "gelu_pytorch_tanh",
        }
    ),
    generator=generated,
    checkpoint_keys=("layer_types", "hidden_activation"),
    chat_template=t.GEMMA3,
    special_tokens=t.GEMMA3_SPECIAL_TOKENS,
    bos_token="<bos>",
    add_bos_token=True,
    eos_token="<eos>",
    token_ids=frozen(
        {
            "bos_token_id": "<bos>",
            "pad_token_id": "<pad>",
            "eos_token_id": ("<eos>", "<end_of_turn>"),
        }
    ),
    expected_parser=None,
    expected_caches=("KVCache", "RotatingKVCache"),
    tags=(*TEXT_TAGS, "sliding-window"),
    notes="Gemma 3: local (sliding window 64 -> RotatingKVCache) and global layers alternate. "
    "No tool markup: Gemma writes calls as ```tool_code blocks, which mlx-lm does not parse.",
)

MISTRAL = Family(
    name="mistral",
    backend="mlx_lm",
    content_bearing=True,
    config=frozen(
        {
            "model_type": "mistral",
            "architectures": ["MistralForCausalLM"],
            "hidden_size": 64,
            "num_hidden_layers": 2,
            "intermediate_size": 128,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "vocab_size": VOCAB_SIZE,
            "max_position_embeddings": 4096,
            "head_dim": 16,
            "rms_norm_eps": 1e-5,
            "rope_theta": 1000000.0,
            "sliding_window": None,
            "tie_word_embeddings": False,
        }
    ),
    origin_reason="mlx-lm has no mistral module to derive from: it loads model_type mistral "
    "with its llama module",
    chat_template=t.MISTRAL_V3,
    special_tokens=t.MISTRAL_V3_SPECIAL_TOKENS,
    bos_token="<s>",
    add_bos_token=True,
    eos_token="</s>",
    token_ids=frozen({"bos_token_id": "<s>", "eos_token_id": "</s>"}),
    expected_parser="mistral",
    tags=TEXT_TAGS,
    notes="Mistral-7B-Instruct-v0.3: [AVAILABLE_TOOLS]/[TOOL_CALLS] control tokens; mlx-lm "
    "maps model_type mistral to its llama module.",
)

PHI3 = Family(
    name="phi3",
    backend="mlx_lm",
    content_bearing=True,
    config=frozen(
        {
            "model_type": "phi3",
            "architectures": ["Phi3ForCausalLM"],
            "partial_rotary_factor": 0.75,
            "tie_word_embeddings": True,  # Phi-4-mini ties them (Phi-3 did not)
        }
    ),
    generator=generated,
    chat_template=t.PHI4_MINI,
    special_tokens=t.PHI4_MINI_SPECIAL_TOKENS,
    bos_token="<|endoftext|>",
    eos_token="<|endoftext|>",
    token_ids=frozen(
        {
            "bos_token_id": "<|endoftext|>",
            "pad_token_id": "<|endoftext|>",
            "eos_token_id": ("<|endoftext|>", "<|end|>"),
        }
    ),
    expected_parser=None,
    tags=TEXT_TAGS,
    notes="Phi-4-mini-instruct (model_type phi3): fused qkv/gate_up, partial rotary 0.75. Its "
    "<|tool|>/<|tool_call|> markup is unknown to mlx-lm, so no tool parser is inferred.",
)

LFM2 = Family(
    name="lfm2",
    backend="mlx_lm",
    content_bearing=True,
    config=frozen(
        {
            "model_type": "lfm2",
            "architectures": ["Lfm2ForCausalLM"],
            "num_hidden_layers": 3,
            "layer_types": ["conv", "full_attention", "conv"],
            "full_attn_idxs": [1],
            "block_ff_dim": 192,
            "block_multiple_of": 32,
            "block_auto_adjust_ff_dim": True,
            "tie_embedding": True,
        }
    ),
    generator=generated,
    checkpoint_keys=("tie_embedding",),
    chat_template=t.LFM2,
    special_tokens=t.LFM2_SPECIAL_TOKENS,
    bos_token="<|startoftext|>",
    add_bos_token=True,
    eos_token="<|im_end|>",
    token_ids=frozen(
        {"bos_token_id": "<|startoftext|>", "eos_token_id": "<|im_end|>", "pad_token_id": "<|pad|>"}
    ),
    expected_parser="pythonic",
    expected_caches=("ArraysCache", "KVCache"),
    tags=(*TEXT_TAGS, "hybrid"),
    notes="Hybrid LFM2: short-conv layers (ArraysCache) around a full-attention layer (KVCache); "
    "pythonic tool calls between <|tool_call_start|> and <|tool_call_end|>.",
)

TEXT_FAMILIES: tuple[Family, ...] = (
    LLAMA,
    QWEN2,
    QWEN3,
    GEMMA3_TEXT,
    MISTRAL,
    PHI3,
    QWEN3_MOE,
    LFM2,
)
