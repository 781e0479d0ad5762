"""Decoder dimensions and context length from config.json (flat, or nested in text_config).

Layer kinds follow what mlx-lm's ``make_cache`` does: ``layer_types`` when the config lists them
(gemma3, lfm2, qwen3_next ...), else Gemma's ``sliding_window_pattern`` (every N-th layer is
global), else a hybrid's ``full_attention_interval``; everything else is full attention (mlx-lm
keeps a full cache for Qwen2's and Mistral's optional windows too). Non-attention layers keep a
fixed state whose size is modelled per kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.probe.types import TextArch

CONTEXT_KEYS = (
    "max_position_embeddings",
    "max_sequence_length",
    "max_seq_len",
    "seq_length",
    "n_positions",
    "n_ctx",
    "max_target_positions",
)
SENTINEL = 10_000_000  # tokenizer "model_max_length" style placeholders are larger
FULL_KINDS = frozenset({"full_attention", "attention", "global", "full", "global_attention"})
SLIDING_KINDS = frozenset({"sliding_attention", "local", "sliding", "local_attention", "swa"})


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language model's settings: ``text_config`` / ``llm_config`` merged over the top."""
    for key in ("text_config", "llm_config", "language_config"):
        nested = config.get(key)
        if isinstance(nested, Mapping) and nested:
            return {**config, **nested}
    return config


def context_length(config: Mapping[str, Any]) -> int | None:
    for scope in (text_config(config), config):
        for key in CONTEXT_KEYS:
            value = _int(scope.get(key))
            if value and 0 < value < SENTINEL:
                return value
    return None


def text_arch(config: Mapping[str, Any]) -> TextArch | None:
    """The decoder's dimensions, or None when the config does not describe a decoder."""
    c = text_config(config)
    hidden = _int(c.get("hidden_size") or c.get("d_model") or c.get("n_embd") or c.get("dim"))
    layers = _int(c.get("num_hidden_layers") or c.get("n_layer") or c.get("n_layers"))
    heads = _int(c.get("num_attention_heads") or c.get("n_head") or c.get("n_heads"))
    if not hidden or not layers or not heads:
        return None
    kv_heads = _int(c.get("num_key_value_heads") or c.get("n_kv_heads")) or heads
    head_dim = _int(c.get("head_dim")) or hidden // heads
    experts = _int(c.get("num_experts") or c.get("num_local_experts") or c.get("n_routed_experts"))
    top_k = _int(c.get("num_experts_per_tok") or c.get("moe_topk") or c.get("top_k_experts"))
    inter = _int(c.get("intermediate_size") or c.get("block_ff_dim") or c.get("ffn_dim")) or (
        4 * hidden
    )
    moe_inter = _int(c.get("moe_intermediate_size"))
    if experts and top_k and moe_inter:
        shared = _int(c.get("shared_expert_intermediate_size")) or 0
        inter = top_k * moe_inter + shared
    kinds = _layer_kinds(c, layers)
    window = _int(c.get("sliding_window")) if "sliding" in kinds else None
    return TextArch(
        hidden_size=hidden,
        num_layers=layers,
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=inter,
        vocab_size=_int(c.get("vocab_size")) or 32000,
        layer_kinds=kinds,
        sliding_window=window,
        num_experts=experts,
        experts_per_token=top_k,
        state_elements={k: _state_elements(k, c, hidden) for k in set(kinds) - {"full", "sliding"}},
    )


def _layer_kinds(c: Mapping[str, Any], layers: int) -> tuple[str, ...]:
    listed = c.get("layer_types")
    if isinstance(listed, (list, tuple)) and len(listed) == layers:
        return tuple(_kind(str(k)) for k in listed)
    window = _int(c.get("sliding_window"))
    pattern = _int(c.get("sliding_window_pattern"))
    if window and pattern and pattern > 1:
        return tuple("full" if i % pattern == pattern - 1 else "sliding" for i in range(layers))
    full_every = _int(c.get("full_attn_interval") or c.get("full_attention_interval"))
    if full_every and full_every > 1:
        return tuple("full" if (i + 1) % full_every == 0 else "linear" for i in range(layers))
    return ("full",) * layers


def _kind(name: str) -> str:
    lowered = name.lower()
    if lowered in FULL_KINDS:
        return "full"
    if lowered in SLIDING_KINDS or "sliding" in lowered:
        return "sliding"
    if "conv" in lowered:
        return "conv"
    if "linear" in lowered or "delta" in lowered:
        return "linear"
    if "mamba" in lowered or "ssm" in lowered or "recurrent" in lowered:
        return "ssm"
    return lowered


def _state_elements(kind: str, c: Mapping[str, Any], hidden: int) -> int:
    """Elements of the fixed per-layer state a non-attention layer keeps (batch 1)."""
    if kind == "conv":  # lfm2 short convolution: (L_cache - 1) x hidden
        return (max(_int(c.get("conv_L_cache")) or 3, 2) - 1) * hidden
    if kind == "linear":  # gated delta net: conv state + (heads, k_dim, v_dim) recurrent state
        v_heads = _int(c.get("linear_num_value_heads")) or 1
        k_heads = _int(c.get("linear_num_key_heads")) or v_heads
        k_dim = _int(c.get("linear_key_head_dim")) or 128
        v_dim = _int(c.get("linear_value_head_dim")) or 128
        conv = (_int(c.get("linear_conv_kernel_dim")) or 4) - 1
        return conv * (2 * k_heads * k_dim + v_heads * v_dim) + v_heads * k_dim * v_dim
    if kind == "ssm":  # mamba: conv state + (heads/inner, state) recurrent state
        inner = _int(c.get("mamba_d_inner") or c.get("intermediate_size")) or 2 * hidden
        state = _int(c.get("state_size") or c.get("ssm_state_size") or c.get("d_state")) or 16
        conv = (_int(c.get("conv_kernel") or c.get("d_conv")) or 4) - 1
        return conv * inner + inner * state
    return hidden  # unknown kind: a hidden-sized state, flagged by the estimate as approximate
