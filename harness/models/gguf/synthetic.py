"""Write small synthetic GGUF files (tests, probing fixtures) with the ``gguf`` package's writer.

``tiny_llama`` / ``tiny_gemma3`` lay out tensors exactly as llama.cpp's converter does (Q/K rope
permutation for llama, ``w + 1`` norms for Gemma) and return the Hugging Face-layout reference
weights, so a converter can be checked against them. Weights are random: output is gibberish.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content']"
    " + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"
)
WORDS = ("the", "capital", "of", "France", "is", "Paris", "hello", "world")


@dataclass(frozen=True)
class TinyGGUF:
    """A written GGUF and, per GGUF tensor name, its Hugging Face-layout float32 weights."""

    path: Path
    reference: Mapping[str, np.ndarray]
    n_head: int
    n_head_kv: int


def write_gguf(
    path: Path, arch: str, metadata: Mapping[str, Any], tensors: Mapping[str, tuple[Any, str]]
) -> Path:
    """Write a GGUF file. ``tensors`` maps names to (float32 array, GGML type name), or to
    (raw uint8 block bytes, block type name) for types the gguf package cannot quantize."""
    from gguf import GGMLQuantizationType, GGUFWriter
    from gguf.quants import quantize

    writer = GGUFWriter(str(path), arch)
    for key, value in metadata.items():
        if isinstance(value, bool):
            writer.add_bool(key, value)
        elif isinstance(value, int):
            writer.add_uint32(key, value)
        elif isinstance(value, float):
            writer.add_float32(key, value)
        elif isinstance(value, str):
            writer.add_string(key, value)
        else:
            writer.add_array(key, list(value))
    for name, (array, type_name) in tensors.items():
        qtype = GGMLQuantizationType[type_name]
        if type_name == "F32":
            writer.add_tensor(name, np.asarray(array, dtype=np.float32))
        elif type_name == "F16":
            writer.add_tensor(name, np.asarray(array, dtype=np.float16))
        elif array.dtype == np.uint8:
            writer.add_tensor(name, array, raw_dtype=qtype)
        else:
            writer.add_tensor(name, quantize(np.asarray(array, np.float32), qtype), raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def k_quant_bytes(rows: int, cols: int, type_name: str, seed: int = 0) -> np.ndarray:
    """Random but valid Q6_K / Q4_K blocks (the gguf package has no K-quantizer)."""
    rng = np.random.default_rng(seed)
    size = {"Q6_K": 210, "Q4_K": 144}[type_name]
    blocks = rng.integers(0, 256, size=(rows, cols // 256, size), dtype=np.uint8)
    scale = np.frombuffer(np.float16(0.002).tobytes(), dtype=np.uint8)
    if type_name == "Q6_K":  # ql[128] qh[64] scales[16] d
        blocks[..., 208:210] = scale
    else:  # d dmin scales[12] qs[128]
        blocks[..., 0:2] = scale
        blocks[..., 2:4] = scale
    return blocks.reshape(rows, -1)


def byte_level_vocab() -> tuple[list[str], list[int], list[str]]:
    """GPT-2 byte-level tokens (ChatML specials first), token types and a few merges."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars, extra = [], 0
    for b in range(256):
        chars.append(chr(b) if b in printable else chr(256 + extra))
        extra += b not in printable
    merges: list[str] = []
    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *chars]
    for word in WORDS:
        piece = "\u0120" + word[0]
        merges.append(f"\u0120 {word[0]}")
        for ch in word[1:]:
            merges.append(f"{piece} {ch}")
            piece += ch
        tokens += [
            t for t in ("\u0120" + word[: i + 1] for i in range(len(word))) if t not in tokens
        ]
    merges = list(dict.fromkeys(merges))
    return tokens, [3, 3, 3] + [1] * (len(tokens) - 3), merges


def spm_vocab() -> tuple[list[str], list[int], list[float]]:
    """SentencePiece-style tokens (Gemma specials, byte fallback, scored pieces)."""
    tokens = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>", "\n"]
    types = [3, 3, 3, 2, 3, 3, 4]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [6] * 256
    pieces: list[str] = []
    for word in WORDS:
        text = "\u2581" + word
        pieces += [text[i:j] for i in range(len(text)) for j in range(i + 1, len(text) + 1)]
    pieces = sorted(dict.fromkeys(pieces), key=len)
    scores = [0.0] * len(tokens) + [-float(i) for i in range(len(pieces))]
    return tokens + pieces, types + [1] * len(pieces), scores


def _permute(w: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's convert_hf_to_gguf permutation of Q/K rows for its rope."""
    return (
        w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)
    )


def _common(arch: str, hidden: int, ffn: int, layers: int, heads: int, kv: int) -> dict[str, Any]:
    return {
        f"{arch}.block_count": layers,
        f"{arch}.context_length": 512,
        f"{arch}.embedding_length": hidden,
        f"{arch}.feed_forward_length": ffn,
        f"{arch}.attention.head_count": heads,
        f"{arch}.attention.head_count_kv": kv,
        f"{arch}.attention.layer_norm_rms_epsilon": 1e-5,
    }


def tiny_llama(
    path: Path,
    *,
    types: Mapping[str, str] | None = None,
    tied: bool = False,
    seed: int = 0,
    metadata: Mapping[str, Any] | None = None,
) -> TinyGGUF:
    """A 2-layer llama (hidden 64, 4 heads, 2 KV heads, ffn 256) with a byte-level BPE.

    ``types`` maps GGUF tensor names to GGML types; defaults mix F32/F16/Q8_0/Q4_0/Q4_1/Q5_0 and
    a Q6_K ``ffn_down`` in block 1 (K types are not allowed for attn_q/attn_k). Norms are F32.
    ``metadata`` overrides keys (a value of None drops the key)."""
    from gguf import GGMLQuantizationType
    from gguf.quants import dequantize

    hidden, ffn, heads, kv, layers = 64, 256, 4, 2, 2
    tokens, token_types, merges = byte_level_vocab()
    chosen = {
        "token_embd.weight": "Q8_0",
        "output.weight": "F16",
        "blk.0.attn_q.weight": "F32",
        "blk.0.attn_k.weight": "F16",
        "blk.1.attn_q.weight": "Q4_1",
        "blk.1.attn_k.weight": "Q8_0",
        "blk.1.attn_v.weight": "Q5_0",
        "blk.1.ffn_down.weight": "Q6_K",
    } | dict(types or {})
    rng = np.random.default_rng(seed)
    shapes: dict[str, tuple[int, ...]] = {
        "token_embd.weight": (len(tokens), hidden),
        "output_norm.weight": (hidden,),
    }
    if not tied:
        shapes["output.weight"] = (len(tokens), hidden)
    for b in range(layers):
        head_dim = hidden // heads
        for part, dims in (
            ("attn_norm", (hidden,)), ("ffn_norm", (hidden,)), ("attn_q", (hidden, hidden)),
            ("attn_k", (kv * head_dim, hidden)), ("attn_v", (kv * head_dim, hidden)),
            ("attn_output", (hidden, hidden)), ("ffn_gate", (ffn, hidden)),
            ("ffn_up", (ffn, hidden)), ("ffn_down", (hidden, ffn)),
        ):  # fmt: skip
            shapes[f"blk.{b}.{part}.weight"] = dims
    reference: dict[str, np.ndarray] = {}
    tensors: dict[str, tuple[Any, str]] = {}
    for name, shape in shapes.items():
        is_norm = len(shape) == 1
        hf = (1.0 + 0.1 * rng.standard_normal(shape)) if is_norm else rng.standard_normal(shape)
        hf = (hf * (1.0 if is_norm else 0.08)).astype(np.float32)
        kind = "F32" if is_norm else chosen.get(name, "Q4_0")
        stored = hf
        if name.endswith(("attn_q.weight", "attn_k.weight")):
            stored = _permute(hf, heads if "attn_q" in name else kv)
        if kind.endswith("_K"):  # random blocks: the reference is their dequantization
            stored = k_quant_bytes(shape[0], shape[-1], kind, seed)
            hf = np.asarray(dequantize(stored, GGMLQuantizationType[kind]), dtype=np.float32)
        reference[name] = hf
        tensors[name] = (stored, kind)
    meta = _common("llama", hidden, ffn, layers, heads, kv) | {
        "llama.rope.freq_base": 10000.0,
        "llama.rope.dimension_count": hidden // heads,
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "smollm",
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": token_types,
        "tokenizer.ggml.merges": merges,
        "tokenizer.ggml.bos_token_id": 1,
        "tokenizer.ggml.eos_token_id": 2,
        "tokenizer.ggml.add_bos_token": False,
        "tokenizer.chat_template": CHATML,
    }
    meta = {k: v for k, v in (meta | dict(metadata or {})).items() if v is not None}
    write_gguf(path, "llama", meta, tensors)
    return TinyGGUF(path, reference, heads, kv)


def tiny_gemma3(path: Path, *, seed: int = 0) -> TinyGGUF:
    """A 6-layer (one sliding-window cycle) Gemma 3 text model (hidden 64, 2 heads of 32, 1 KV
    head) with a SentencePiece vocabulary; norms are stored as ``w + 1`` like llama.cpp does."""
    hidden, ffn, heads, kv, layers, head_dim = 64, 128, 2, 1, 6, 32
    tokens, token_types, scores = spm_vocab()
    rng = np.random.default_rng(seed)
    shapes: dict[str, tuple[int, ...]] = {
        "token_embd.weight": (len(tokens), hidden),
        "output_norm.weight": (hidden,),
    }
    for b in range(layers):
        for part, dims in (
            ("attn_norm", (hidden,)), ("post_attention_norm", (hidden,)),
            ("ffn_norm", (hidden,)), ("post_ffw_norm", (hidden,)),
            ("attn_q_norm", (head_dim,)), ("attn_k_norm", (head_dim,)),
            ("attn_q", (heads * head_dim, hidden)), ("attn_k", (kv * head_dim, hidden)),
            ("attn_v", (kv * head_dim, hidden)), ("attn_output", (hidden, heads * head_dim)),
            ("ffn_gate", (ffn, hidden)), ("ffn_up", (ffn, hidden)), ("ffn_down", (hidden, ffn)),
        ):  # fmt: skip
            shapes[f"blk.{b}.{part}.weight"] = dims
    reference: dict[str, np.ndarray] = {}
    tensors: dict[str, tuple[Any, str]] = {}
    for name, shape in shapes.items():
        hf = (0.08 * rng.standard_normal(shape)).astype(np.float32)
        reference[name] = hf
        stored = hf + 1.0 if len(shape) == 1 else hf
        tensors[name] = (stored, "F32" if len(shape) == 1 else "Q8_0")
    metadata = _common("gemma3", hidden, ffn, layers, heads, kv) | {
        "gemma3.attention.key_length": head_dim,
        "gemma3.attention.value_length": head_dim,
        "gemma3.attention.sliding_window": 64,
        "gemma3.rope.freq_base": 1000000.0,
        "tokenizer.ggml.model": "llama",
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": token_types,
        "tokenizer.ggml.scores": scores,
        "tokenizer.ggml.bos_token_id": 2,
        "tokenizer.ggml.eos_token_id": 1,
        "tokenizer.ggml.unknown_token_id": 3,
        "tokenizer.ggml.padding_token_id": 0,
        "tokenizer.ggml.add_bos_token": True,
        "tokenizer.ggml.add_space_prefix": False,
    }
    write_gguf(path, "gemma3", metadata, tensors)
    return TinyGGUF(path, reference, heads, kv)
