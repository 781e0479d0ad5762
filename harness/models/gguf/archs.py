"""GGUF architectures the importer understands: tensor name maps and mlx-lm config builders.

* ``llama`` (Llama 1/2, SmolLM, SmolLM2, TinyLlama, ...) -> mlx-lm ``llama``. llama.cpp stores
  the Q and K projections permuted for its rope; they are un-permuted per head.
* ``gemma3`` (text part) -> mlx-lm ``gemma3_text``. llama.cpp stores every RMSNorm weight as
  ``w + 1``; mlx-lm applies ``1 + w`` itself, so 1 is subtracted. No Q/K permutation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.models.gguf.errors import GGUFImportError
from harness.models.gguf.reader import GGUFFile

# Tensor transforms (applied after reading, before writing).
UNPERMUTE_Q = "unpermute_q"
UNPERMUTE_K = "unpermute_k"
NORM_MINUS_ONE = "norm_minus_one"


@dataclass(frozen=True)
class TensorRule:
    """``gguf`` and ``mlx`` are names with ``{bid}`` standing for the block (layer) number."""

    gguf: str
    mlx: str
    transform: str = ""
    matrix: bool = True  # a Linear/Embedding weight: may stay quantized


@dataclass(frozen=True)
class ArchSpec:
    name: str  # general.architecture in the GGUF file
    model_type: str  # model_type in the mlx-lm config.json
    rules: tuple[TensorRule, ...]
    build_config: Callable[[GGUFFile], dict[str, Any]]

    def rule_for(self, gguf_name: str) -> tuple[TensorRule, str] | None:
        """The rule matching a GGUF tensor name, and the MLX name it maps to."""
        match = re.fullmatch(r"blk\.(\d+)\.(.+)", gguf_name)
        key, bid = (f"blk.{{bid}}.{match.group(2)}", match.group(1)) if match else (gguf_name, "")
        for rule in self.rules:
            if rule.gguf == key:
                return rule, rule.mlx.format(bid=bid)
        return None


def _norm(gguf: str, mlx: str, transform: str = "") -> TensorRule:
    return TensorRule(gguf, mlx, transform, matrix=False)


_L = "model.layers.{bid}."
_COMMON = (
    TensorRule("token_embd.weight", "model.embed_tokens.weight"),
    TensorRule("output.weight", "lm_head.weight"),
    TensorRule("blk.{bid}.attn_v.weight", _L + "self_attn.v_proj.weight"),
    TensorRule("blk.{bid}.attn_output.weight", _L + "self_attn.o_proj.weight"),
    TensorRule("blk.{bid}.ffn_gate.weight", _L + "mlp.gate_proj.weight"),
    TensorRule("blk.{bid}.ffn_up.weight", _L + "mlp.up_proj.weight"),
    TensorRule("blk.{bid}.ffn_down.weight", _L + "mlp.down_proj.weight"),
)

LLAMA_RULES = (
    *_COMMON,
    TensorRule("blk.{bid}.attn_q.weight", _L + "self_attn.q_proj.weight", UNPERMUTE_Q),
    TensorRule("blk.{bid}.attn_k.weight", _L + "self_attn.k_proj.weight", UNPERMUTE_K),
    _norm("output_norm.weight", "model.norm.weight"),
    _norm("blk.{bid}.attn_norm.weight", _L + "input_layernorm.weight"),
    _norm("blk.{bid}.ffn_norm.weight", _L + "post_attention_layernorm.weight"),
)

GEMMA3_RULES = (
    *_COMMON,
    TensorRule("blk.{bid}.attn_q.weight", _L + "self_attn.q_proj.weight"),
    TensorRule("blk.{bid}.attn_k.weight", _L + "self_attn.k_proj.weight"),
    _norm("output_norm.weight", "model.norm.weight", NORM_MINUS_ONE),
    _norm("blk.{bid}.attn_norm.weight", _L + "input_layernorm.weight", NORM_MINUS_ONE),
    _norm(
        "blk.{bid}.post_attention_norm.weight",
        _L + "post_attention_layernorm.weight",
        NORM_MINUS_ONE,
    ),
    _norm("blk.{bid}.ffn_norm.weight", _L + "pre_feedforward_layernorm.weight", NORM_MINUS_ONE),
    _norm(
        "blk.{bid}.post_ffw_norm.weight", _L + "post_feedforward_layernorm.weight", NORM_MINUS_ONE
    ),
    _norm("blk.{bid}.attn_q_norm.weight", _L + "self_attn.q_norm.weight", NORM_MINUS_ONE),
    _norm("blk.{bid}.attn_k_norm.weight", _L + "self_attn.k_norm.weight", NORM_MINUS_ONE),
)


def _get(gguf: GGUFFile, key: str, default: Any = None, *, required: bool = False) -> Any:
    """``<architecture>.<key>`` from the metadata (numbers as Python numbers)."""
    full = f"{gguf.architecture}.{key}"
    if full not in gguf.metadata:
        if required:
            raise GGUFImportError(
                gguf.path,
                f"missing metadata key {full!r}",
                "The file is incomplete; re-export it with llama.cpp.",
            )
        return default
    value = gguf.metadata[full]
    return value.item() if hasattr(value, "item") else value


def _f32(value: float) -> float:
    """A float32 metadata value as the short decimal it was written from (1e-05, not 9.99e-06)."""
    return float(f"{value:.7g}")


def _rope_scaling(gguf: GGUFFile) -> dict[str, Any] | None:
    kind = _get(gguf, "rope.scaling.type", "none")
    if kind in ("none", ""):
        return None
    if kind == "linear":
        return {"rope_type": "linear", "factor": _f32(_get(gguf, "rope.scaling.factor", 1.0))}
    raise GGUFImportError(
        gguf.path,
        f"unsupported rope scaling type {kind!r}",
        "Only 'none' and 'linear' rope scaling can be imported.",
    )


def _base_config(gguf: GGUFFile, model_type: str) -> dict[str, Any]:
    embd = gguf.tensor("token_embd.weight")
    if embd is None:
        raise GGUFImportError(
            gguf.path, "no 'token_embd.weight' tensor", "The file is not a complete language model."
        )
    heads = int(_get(gguf, "attention.head_count", required=True))
    config: dict[str, Any] = {
        "model_type": model_type,
        "hidden_size": int(_get(gguf, "embedding_length", required=True)),
        "num_hidden_layers": int(_get(gguf, "block_count", required=True)),
        "intermediate_size": int(_get(gguf, "feed_forward_length", required=True)),
        "num_attention_heads": heads,
        "num_key_value_heads": int(_get(gguf, "attention.head_count_kv", heads)),
        "rms_norm_eps": _f32(_get(gguf, "attention.layer_norm_rms_epsilon", required=True)),
        "vocab_size": int(embd.shape[0]),
        "max_position_embeddings": int(_get(gguf, "context_length", 2048)),
        "tie_word_embeddings": gguf.tensor("output.weight") is None,
    }
    if (scaling := _rope_scaling(gguf)) is not None:
        config["rope_scaling"] = scaling
    return config


def llama_config(gguf: GGUFFile) -> dict[str, Any]:
    """mlx-lm ``llama`` config from ``llama.*`` metadata."""
    if gguf.tensor("rope_freqs.weight") is not None:
        raise GGUFImportError(
            gguf.path,
            "Llama 3 style rope frequency tensor 'rope_freqs.weight'",
            "Llama 3.1+ rope scaling is not supported by this importer yet.",
        )
    config = _base_config(gguf, "llama")
    head_dim = int(
        _get(gguf, "attention.key_length", config["hidden_size"] // config["num_attention_heads"])
    )
    rope_dims = int(_get(gguf, "rope.dimension_count", head_dim))
    if rope_dims != head_dim:
        raise GGUFImportError(
            gguf.path,
            f"partial rotary embedding ({rope_dims} of {head_dim})",
            "Only full-head rope is supported for llama.",
        )
    config.update(
        head_dim=head_dim,
        rope_theta=_f32(_get(gguf, "rope.freq_base", 10000.0)),
        rope_traditional=False,
        attention_bias=False,
        mlp_bias=False,
    )
    return config


def gemma3_config(gguf: GGUFFile) -> dict[str, Any]:
    """mlx-lm ``gemma3_text`` config; llama.cpp's fixed Gemma 3 values fill what GGUF omits."""
    config = _base_config(gguf, "gemma3_text")
    head_dim = int(_get(gguf, "attention.key_length", 256))
    # llama.cpp: attention scale 1/sqrt(head_dim), except Gemma 3 27B (62 blocks).
    scalar = head_dim
    if config["num_hidden_layers"] == 62:
        scalar = config["hidden_size"] // config["num_attention_heads"]
    config.update(
        head_dim=head_dim,
        rope_theta=_f32(_get(gguf, "rope.freq_base", 1_000_000.0)),
        rope_local_base_freq=_f32(_get(gguf, "rope.freq_base_swa", 10_000.0)),
        query_pre_attn_scalar=scalar,
        sliding_window=int(_get(gguf, "attention.sliding_window", 512)),
        sliding_window_pattern=6,
    )
    return config


ARCHITECTURES: tuple[ArchSpec, ...] = (
    ArchSpec("llama", "llama", LLAMA_RULES, llama_config),
    ArchSpec("gemma3", "gemma3_text", GEMMA3_RULES, gemma3_config),
)


def supported_architectures() -> tuple[str, ...]:
    return tuple(spec.name for spec in ARCHITECTURES)


def arch_spec(gguf: GGUFFile) -> ArchSpec:
    """The spec for this file's architecture, or a one-line error listing supported ones."""
    for spec in ARCHITECTURES:
        if spec.name == gguf.architecture:
            return spec
    found = gguf.architecture or "(none: no general.architecture key)"
    raise GGUFImportError(
        gguf.path,
        f"unsupported architecture {found!r}",
        f"Supported: {', '.join(supported_architectures())}; convert this model with "
        "mlx_lm.convert from its Hugging Face weights instead.",
    )
