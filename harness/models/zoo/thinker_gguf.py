"""The zoo thinker as a GGUF beside its MLX weights, so llama-server serves the same model.

llama.cpp's own converter is not installed here (only its binaries), and the zoo's trained
byte-level BPE tokenizer is a GPT-2-style one it reads as ``gpt2`` with the ``gpt-2``
pre-tokenizer; so the folder's float32 weights, tokenizer and chat template are written out
with the ``gguf`` package's writer (:func:`harness.models.gguf.synthetic.write_gguf`), laid out
as llama.cpp's converter lays out Qwen3 (no Q/K permutation; the output head tied to the
embeddings). llama-server's ``--jinja`` renders the same template, so it answers as mlx-lm does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GGUF_NAME = "model-f32.gguf"
_LAYER_NAMES = {
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "self_attn.q_norm": "attn_q_norm",
    "self_attn.k_norm": "attn_k_norm",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}


def _vocabulary(folder: Path, size: int) -> tuple[list[str], list[int], list[str]]:
    """Tokens by id, their GGUF types (1 normal, 3 control, 5 unused) and the BPE merges."""
    tok = json.loads((folder / "tokenizer.json").read_text())
    tokens = [""] * size
    types = [1] * size
    for text, i in tok["model"]["vocab"].items():
        tokens[int(i)] = text
    for added in tok["added_tokens"]:
        tokens[int(added["id"])] = added["content"]
        types[int(added["id"])] = 3 if added["special"] else 4
    for i, text in enumerate(tokens):
        if not text:
            tokens[i], types[i] = f"[PAD{i}]", 5
    merges = [" ".join(m) if isinstance(m, list) else str(m) for m in tok["model"]["merges"]]
    return tokens, types, merges


def write_thinker_gguf(folder: Path) -> Path:
    """Write the Qwen3 model in ``folder`` (config, tokenizer, ``model.safetensors``) as a
    float32 GGUF in the same folder; return its path."""
    import numpy as np
    from safetensors.numpy import load_file

    from harness.models.gguf.synthetic import write_gguf

    cfg = json.loads((folder / "config.json").read_text())
    tokens, types, merges = _vocabulary(folder, int(cfg["vocab_size"]))
    template = json.loads((folder / "tokenizer_config.json").read_text())["chat_template"]
    arch = "qwen3"
    meta: dict[str, Any] = {
        f"{arch}.context_length": int(cfg["max_position_embeddings"]),
        f"{arch}.embedding_length": int(cfg["hidden_size"]),
        f"{arch}.block_count": int(cfg["num_hidden_layers"]),
        f"{arch}.feed_forward_length": int(cfg["intermediate_size"]),
        f"{arch}.attention.head_count": int(cfg["num_attention_heads"]),
        f"{arch}.attention.head_count_kv": int(cfg["num_key_value_heads"]),
        f"{arch}.attention.key_length": int(cfg["head_dim"]),
        f"{arch}.attention.value_length": int(cfg["head_dim"]),
        f"{arch}.rope.freq_base": float(cfg["rope_theta"]),
        f"{arch}.attention.layer_norm_rms_epsilon": float(cfg["rms_norm_eps"]),
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "gpt-2",
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": types,
        "tokenizer.ggml.merges": merges,
        "tokenizer.ggml.eos_token_id": tokens.index("<|im_end|>"),
        "tokenizer.ggml.padding_id": tokens.index("<|endoftext|>"),
        "tokenizer.ggml.add_bos_token": False,
        "tokenizer.chat_template": template,
    }
    weights = load_file(str(folder / "model.safetensors"))
    tensors = {
        "token_embd.weight": weights["model.embed_tokens.weight"],
        "output_norm.weight": weights["model.norm.weight"],
    }
    for i in range(int(cfg["num_hidden_layers"])):
        for hf, gg in _LAYER_NAMES.items():
            tensors[f"blk.{i}.{gg}.weight"] = weights[f"model.layers.{i}.{hf}.weight"]
    out = folder / GGUF_NAME
    write_gguf(out, arch, meta, {k: (v.astype(np.float32), "F32") for k, v in tensors.items()})
    return out
