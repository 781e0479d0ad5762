"""Tiny text-model configurations derived from mlx-lm's own ``ModelArgs`` (not written per family).

Every module of the installed ``mlx_lm.models`` package is either an architecture (it defines
``Model`` and ``ModelArgs``) or one of the helpers in :data:`NOT_ARCHITECTURES`, each with the
reason. For an architecture, :func:`tiny_config` starts from its ``ModelArgs`` dataclass defaults,
shrinks every size field it knows by name (:data:`SIZES`), fills the fields that have no default
by name and then by type (:func:`fill_value`), and applies the few per-architecture
:data:`OVERRIDES` generation needs. ``text_config`` fields (multimodal wrappers) are derived the
same way from the text model's arguments. :func:`tokenizer_family` gives the tokenizer, chat
template and special tokens the generated model ships with: the zoo family of the same
``model_type`` where there is one (so its tool template comes along), else plain ChatML.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import typing
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from harness.models.zoo import templates as t
from harness.models.zoo.family import VOCAB_SIZE, Family, frozen

PACKAGE = "mlx_lm.models"

NOT_ARCHITECTURES: Mapping[str, str] = MappingProxyType(
    {
        "activations": "activation functions shared by the models",
        "base": "BaseModelArgs and attention/mask helpers every model imports",
        "bitlinear_layers": "the BitLinear layer bitnet models use",
        "cache": "the KV and state caches (make_prompt_cache, trimming)",
        "gated_delta": "the gated delta-rule kernel of linear-attention models",
        "mla": "multi-head latent attention layers (MultiLinear) shared by MLA models",
        "pipeline": "PipelineMixin for pipeline-parallel sharding",
        "rope_utils": "rotary embedding variants (initialize_rope, YaRN, Llama 3)",
        "ssm": "the state-space scan kernel of Mamba-style models",
        "switch_layers": "mixture-of-experts layers (SwitchGLU, SwitchLinear)",
    }
)
"""Modules of ``mlx_lm.models`` that define no model: helpers the architectures import."""

# Size fields shrunk wherever they appear as integers (defaults included), and filled when required.
SIZES: Mapping[str, int] = MappingProxyType(
    {
        "vocab_size": VOCAB_SIZE,
        "hidden_size": 64,
        "n_embd": 64,
        "d_model": 64,
        "model_dim": 64,
        "dim": 64,
        "block_dim": 64,
        "dim_model_base": 64,
        "intermediate_size": 128,
        "n_inner": 128,
        "ffn_hidden_size": 128,
        "ff_intermediate_size": 128,
        "intermediate_size_mlp": 128,
        "hidden_dim": 128,
        "num_hidden_layers": 2,
        "num_layers": 2,
        "n_layer": 2,
        "n_layers": 2,
        "num_transformer_layers": 2,
        "num_attention_heads": 4,
        "n_head": 4,
        "n_heads": 4,
        "num_heads": 4,
        "num_key_value_heads": 2,
        "num_kv_heads": 2,
        "n_kv_heads": 2,
        "head_dim": 16,
        "max_position_embeddings": 4096,
        "n_positions": 4096,
        "n_ctx": 4096,
        "model_max_length": 4096,
        "moe_intermediate_size": 32,
        "expert_ffn_hidden_size": 32,
        "shared_intermediate_size": 32,
        "shared_expert_intermediate_size": 32,
        "num_experts": 4,
        "n_routed_experts": 4,
        "num_local_experts": 4,
        "moe_num_experts": 4,
        "num_experts_per_tok": 2,
        "num_experts_per_token": 2,
        "moe_topk": 2,
        "n_shared_experts": 1,
        "num_shared_experts": 1,
        "num_shared_expert": 1,
        "first_k_dense_replace": 1,
        "num_dense_layers": 1,
        "n_group": 1,
        "topk_group": 1,
        "kv_lora_rank": 16,
        "q_lora_rank": 32,
        "qk_rope_head_dim": 8,
        "qk_nope_head_dim": 16,
        "v_head_dim": 16,
        "rotary_dim": 8,
        "index_head_dim": 16,
        "index_n_heads": 2,
        "index_topk": 8,
        "state_size": 16,
        "ssm_state_size": 16,
        "mamba_d_state": 16,
        "mamba_num_heads": 4,
        "mamba_head_dim": 16,
        "time_step_rank": 8,
        "linear_num_key_heads": 2,
        "linear_num_value_heads": 4,
        "linear_key_head_dim": 16,
        "linear_value_head_dim": 16,
        "a_low_rank_dim": 8,
        "v_low_rank_dim": 8,
        "gate_low_rank_dim": 8,
        "decay_low_rank_dim": 8,
        "swa_num_attention_heads": 4,
        "swa_num_key_value_heads": 2,
        "swa_head_dim": 16,
        "swa_v_head_dim": 16,
        "sliding_window": 64,
        "sliding_window_pattern": 2,
        "kv_channels": 16,
        "n_shared_head": 2,
        "moe_top_k": 2,
        "share_expert_dim": 32,
        "sliding_window_size": 64,
        "attention_window_size": 64,
        "full_attention_interval": 2,  # of 2 layers: linear, then full attention
        "vocab_size_per_layer_input": VOCAB_SIZE,
        "hidden_size_per_layer_input": 16,
        "global_head_dim": 32,
    }
)

# Required fields outside SIZES, by name (values a real checkpoint would carry).
NAMED: Mapping[str, Any] = MappingProxyType(
    {
        "hidden_act": "silu",
        "rope_theta": 10000.0,
        "rotary_emb_base": 10000,
        "swa_rope_theta": 10000.0,
        "partial_rotary_factor": 1.0,
        "rotary_pct": 1.0,
        "routed_scaling_factor": 1.0,
        "topk_method": "noaux_tc",
        "scoring_func": "sigmoid",
        "conv_kernel": 4,
        "conv_L_cache": 3,
        "conv1d_width": 4,
        "conv_window": 4,
        "linear_conv_kernel_dim": 4,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
        "n_groups": 1,
        "decoder_sparse_step": 1,
        "moe_layer_freq": 1,
        "layer_group_size": 1,
        "group_norm_size": 1,
        "time_step_limit": (0.0, float("inf")),
        "logits_soft_cap": 30.0,
        "gegelu_limit": 20.0,
        "block_multiple_of": 16,
        "block_ffn_dim_multiplier": 1.0,
        "ffn_dim_divisor": 16,
        "mlp_only_layers": (),
        "layer_types": ("sliding_attention", "full_attention"),
        "is_moe_layer": (False, True),
        "no_rope_layers": (1, 1),
        "rope_scaling": None,
        "tie_word_embeddings": True,
    }
)

# None defaults that mean "off", not "unset": they stay off.
KEEP_UNSET = frozenset({"sliding_window", "sliding_window_size", "attention_window_size"})

# Named (not size) fields whose None default means "read it from the checkpoint": filled.
FILL_UNSET = frozenset({"rope_theta"})

# RoPE settings real checkpoints carry where a module reads them unconditionally.
_YARN = {  # Mistral 3's (Ministral 3, Mistral Small 4), at the tiny context
    "rope_type": "yarn",
    "type": "yarn",
    "rope_theta": 1000000.0,
    "factor": 16.0,
    "original_max_position_embeddings": 256,
    "beta_fast": 32.0,
    "beta_slow": 1.0,
    "mscale": 1.0,
    "mscale_all_dim": 1.0,
    "llama_4_scaling_beta": 0.1,
}
_PER_LAYER_TYPE_ROPE = {  # rope_parameters keyed by layer type (transformers 5)
    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
    "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
}
_SWA_FULL_X2 = ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]
_KIMI_LINEAR = {  # a KDA (linear attention) layer, then a full one (layer numbers from 1)
    "kda_layers": [1],
    "full_attn_layers": [2],
    "num_heads": 4,
    "head_dim": 16,
    "short_conv_kernel_size": 4,
}
_LONGCAT = {  # LongCat-Flash's; with a scale off mlx-lm never sets the attribute it reads
    "mla_scale_q_lora": True,
    "mla_scale_kv_lora": True,
    "zero_expert_type": "identity",
}

# Per-architecture fields that generation needs beyond the rules above (found by running them).
OVERRIDES: Mapping[str, Mapping[str, Any]] = frozen(
    {
        "afm7": {"num_kv_reuse_layers": 1},  # of 2 layers: one computes KV, one reuses it
        "bailing_moe_linear": {  # linear (GLA) layer, then attention; GLA wants no KV groups
            "layer_group_size": 2,
            "num_key_value_heads": 4,
        },
        "baichuan_m1": {"conv_window": 2},  # the module asserts it
        "dbrx": {  # required dicts the module indexes by key
            "ffn_config": {"ffn_hidden_size": 128, "moe_num_experts": 4, "moe_top_k": 2},
            "attn_config": {"kv_n_heads": 2, "clip_qkv": 8.0, "rope_theta": 10000.0},
        },
        "deepseek_v2": {  # read unconditionally; DeepSeek-V2-Lite's YaRN at factor 1
            "rope_scaling": {
                "type": "yarn",
                "factor": 1.0,
                "original_max_position_embeddings": 4096,
                "beta_fast": 32,
                "beta_slow": 1,
                "mscale": 0.707,
                "mscale_all_dim": 0.707,
            }
        },
        "exaone4": {  # mlx-lm reads the pattern string, transformers the layer types
            "sliding_window_pattern": "LG",
            "layer_types": ["sliding_attention", "full_attention"],
        },
        "gemma2": {"query_pre_attn_scalar": 16},  # transformers' config wants an int
        "gemma3n": {  # 4 layers, the last 2 sharing the KV of the first of their type
            "text_config": {
                "num_hidden_layers": 4,
                "num_kv_shared_layers": 2,
                "layer_types": _SWA_FULL_X2,
                "activation_sparsity_pattern": [0.95, 0.95, 0.0, 0.0],
                "altup_num_inputs": 4,
                "altup_active_idx": 0,
                "laurel_rank": 8,
                "hidden_size_per_layer_input": 16,
            }
        },
        "gemma4": {"text_config": {"num_hidden_layers": 4, "num_kv_shared_layers": 2}},
        "gemma4_text": {"num_hidden_layers": 4, "num_kv_shared_layers": 2},
        "glm_moe_dsa": {  # required; its rope_theta is read from it
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}
        },
        "granitemoehybrid": {  # a Mamba-2 layer, then attention; the mixer's sizes are unset
            "layer_types": ["mamba", "attention"],
            "mamba_n_heads": 4,
            "mamba_d_head": 32,  # transformers: heads * head == mamba_expand (2) * hidden
            "mamba_d_state": 16,
            "mamba_d_conv": 4,
            "mamba_n_groups": 1,
            "mamba_proj_bias": False,
            "mamba_conv_bias": True,
        },
        "hunyuan": {  # read unconditionally: the NTK-alpha RoPE's alpha
            "rope_scaling": {"type": "dynamic", "factor": 1.0, "alpha": 1000.0}
        },
        "jamba": {  # attention and experts every other layer, from the second
            "attn_layer_offset": 1,
            "attn_layer_period": 2,
            "expert_layer_offset": 1,
            "expert_layer_period": 2,
        },
        "kimi_k3": {"text_config": {"linear_attn_config": _KIMI_LINEAR}},
        "kimi_linear": {"linear_attn_config": _KIMI_LINEAR},
        "lfm2": {"full_attn_idxs": [1]},  # conv layer, then attention
        "lfm2-vl": {"text_config": {"full_attn_idxs": [1]}},
        "lfm2_moe": {"layer_types": ["conv", "full_attention"]},
        "llama4": {  # chunked attention in 3 layers of 4, global in the 4th (cache[3])
            "text_config": {
                "num_hidden_layers": 4,
                "attention_chunk_size": 4,
                "num_experts_per_tok": 1,
                "attn_temperature_tuning": True,
            }
        },
        "longcat_flash": _LONGCAT,
        "longcat_flash_ngram": _LONGCAT,
        "mamba2": {"head_dim": 32},  # transformers: hidden_size * expand == num_heads * head_dim
        "mellum": {"rope_parameters": _PER_LAYER_TYPE_ROPE},  # one RoPE per layer type
        "mimo_v2_flash": {  # per-layer lists: sliding then global; dense then experts
            "hybrid_layer_pattern": [1, 0],
            "moe_layer_freq": [0, 1],
        },
        "minicpm3": {  # read unconditionally: LongRoPE factors, one per rotary pair
            "rope_scaling": {
                "type": "longrope",
                "original_max_position_embeddings": 4096,
                "short_factor": [1.0] * 4,
                "long_factor": [1.0] * 4,
            }
        },
        "ministral3": {"rope_parameters": _YARN},  # read unconditionally (Llama 4 scaling)
        "mistral3": {"text_config": {"rope_parameters": _YARN}},
        "mistral4": {"rope_parameters": _YARN},
        "muse_spark": {  # dense FFNs (shared experts) unsupported; towers project to hidden
            "audio_config": {"out_hidden_size": 64},
            "text_config": {
                "num_shared_experts": 0,
                "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
                "layer_rope_theta": [10000.0, 500000.0],  # one per layer (0: no RoPE)
                "moe_hidden_size": 32,
                "final_logit_softcapping": 30.0,
            },
        },
        "nemotron-nas": {  # one block config per layer (GQA groups of 2, FFN x2)
            "block_configs": [{"attention": {"n_heads_in_group": 2}, "ffn": {"ffn_mult": 2.0}}] * 2
        },
        "nemotron_h": {  # Mamba, attention, experts; the router's scale is unset
            "hybrid_override_pattern": "M*E",
            "routed_scaling_factor": 1.0,
            "norm_topk_prob": True,
        },
        "olmo3": {"layer_types": ["sliding_attention", "full_attention"]},
        "openelm": {"num_query_heads": [4, 4], "num_kv_heads": [2, 2], "ffn_multipliers": [2, 2]},
        "prism_hadamard_qwen35": {  # a text pack: 2-bit, group 128, one layer rotated (512)
            "schema_version": 1,
            "tensor_namespace": "mlx-lm-text",
            "quantization": {"bits": 2, "group_size": 128, "mode": "affine"},
            "modules": [
                {
                    "path": "model.layers.1.mlp.down_proj",
                    "embedding": False,
                    "dtype": "float16",
                    "block": 512,  # the smallest Hadamard block
                }
            ],
            "text_config": {  # dense MLPs, the packed one 512 wide
                "num_experts": 0,
                "num_experts_per_tok": 0,
                "intermediate_size": 512,
            },
        },
        "qwen3_vl_moe": {"text_config": {"tie_word_embeddings": False}},  # sanitize wants lm_head
        "recurrent_gemma": {"block_types": ["recurrent", "attention"]},  # required in practice
        "spark2_5": {"rope_parameters": _PER_LAYER_TYPE_ROPE},  # one RoPE per layer type
    }
)
"""Per-architecture values; each comment says why the rules above do not give it."""

# The text model a multimodal wrapper's ``text_config`` holds, where its type hint does not say.
TEXT_MODULES: Mapping[str, str] = MappingProxyType(
    {
        "gemma3": "gemma3_text",
        "gemma4": "gemma4_text",
        "lfm2-vl": "lfm2",
        "mistral3": "ministral3",
        "pixtral": "llama",
        "prism_hadamard_qwen35": "qwen3_5",
        "qwen2_vl": "qwen2",
        "qwen3_vl": "qwen3",
        "qwen3_vl_moe": "qwen3_moe",
        "qwen3_5_moe": "qwen3_5",
    }
)

# A chat template with no tool markup: the tool column then reports what the module declares.
PLAIN_CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def module_names() -> list[str]:
    """Every module of the installed ``mlx_lm.models`` package, sorted (imports only it)."""
    package = importlib.import_module(PACKAGE)
    return sorted(m.name for m in pkgutil.iter_modules(package.__path__))


def architecture_names() -> list[str]:
    """The denominator: every module of the package except the helpers in NOT_ARCHITECTURES."""
    return [name for name in module_names() if name not in NOT_ARCHITECTURES]


def field_defaults(cls: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """``cls``'s dataclass defaults, and its fields without a default (name -> type hint)."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an unresolvable annotation: fall back to the raw ones
        hints = {}
    values: dict[str, Any] = {}
    required: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            values[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            values[f.name] = f.default_factory()
        else:
            required[f.name] = hints.get(f.name, f.type)
    return values, required


def fill_value(name: str, hint: Any) -> Any:
    """A small value for a required field: by name (SIZES, NAMED), else by its type."""
    if name in SIZES:
        return SIZES[name]
    if name in NAMED:
        return NAMED[name]
    if "eps" in name or "epsilon" in name:
        return 1e-5
    origin = typing.get_origin(hint)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if origin is typing.Union:
        return fill_value(name, args[0]) if len(args) == 1 else None
    if hint is bool:
        return False
    if hint is int:
        return 2
    if hint is float:
        return 1.0
    if hint in (list, tuple) or origin in (list, tuple):
        return []
    if hint is dict or origin is dict:
        return {}
    return None


def text_args_class(module_name: str, hint: Any) -> Any:
    """The dataclass a wrapper's ``text_config`` is built from."""
    for arg in typing.get_args(hint):
        if dataclasses.is_dataclass(arg):
            return arg
    module = importlib.import_module(f"{PACKAGE}.{TEXT_MODULES.get(module_name, module_name)}")
    for attr in ("TextArgs", "TextConfig", "TextModelArgs", "ModelArgs"):
        cls = getattr(module, attr, None)
        if cls is None or not dataclasses.is_dataclass(cls):
            continue
        if attr != "ModelArgs" or module_name in TEXT_MODULES:
            return cls
    return None


def shrunk(cls: Any, model_type: str) -> dict[str, Any]:
    """``cls``'s defaults with known sizes shrunk and required fields filled (None defaults left
    out)."""
    values, required = field_defaults(cls)
    for key, size in SIZES.items():
        if type(values.get(key)) is int:
            values[key] = size
    for key, hint in required.items():
        values[key] = fill_value(key, hint)
    for key, value in list(values.items()):
        if value is None and key not in required:
            # A known size unset (computed or required later) gets one; any other None default
            # is left out: written as null, transformers' own config rejects it.
            known = SIZES.get(key) if key not in KEEP_UNSET else None
            if key in FILL_UNSET:
                known = NAMED[key]
            if known is None:
                del values[key]
            else:
                values[key] = known
    if "model_type" in values or "model_type" in required:
        values["model_type"] = model_type
    return values


def tiny_config(module_name: str) -> dict[str, Any]:
    """A ``config.json`` for architecture ``module_name`` derived from its ``ModelArgs``."""
    module = importlib.import_module(f"{PACKAGE}.{module_name}")
    args_cls = module.ModelArgs
    config = shrunk(args_cls, module_name)
    defaults, required = field_defaults(args_cls)
    if "text_config" in required or (
        "text_config" in defaults and not isinstance(defaults["text_config"], Mapping)
    ):
        inner = text_args_class(module_name, required.get("text_config"))
        if inner is not None:
            inner_type = TEXT_MODULES.get(module_name, module_name)
            config["text_config"] = shrunk(inner, inner_type)
    config["model_type"] = module_name
    config.setdefault("vocab_size", VOCAB_SIZE)
    _deep_update(config, OVERRIDES.get(module_name, {}))
    return _jsonable(config)


def _deep_update(target: dict[str, Any], updates: Mapping[str, Any]) -> None:
    for key, value in updates.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _deep_update(target[key], value)
        else:
            target[key] = _jsonable(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _jsonable(dataclasses.asdict(value))
    return value


def tokenizer_family(module_name: str, config: Mapping[str, Any], families: Any) -> Family:
    """The :class:`Family` whose tokenizer and template the generated model ships with.

    ``families`` is the zoo's family table; the text family of the same ``model_type`` lends its
    template, special tokens and eos (so its tool template is tried), else plain ChatML.
    """
    for family in families.values():
        if family.backend == "mlx_lm" and family.model_type == module_name:
            return dataclasses.replace(family, name=f"arch/{module_name}", config=frozen(config))
    return Family(
        name=f"arch/{module_name}",
        backend="mlx_lm",
        config=frozen(config),
        chat_template=PLAIN_CHATML,
        special_tokens=t.CHATML_SPECIAL_TOKENS,
        bos_token=None,
        eos_token="<|im_end|>",
    )
