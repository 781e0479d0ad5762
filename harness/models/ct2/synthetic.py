"""A tiny random CTranslate2 Whisper directory, laid out as CTranslate2's converter writes it.

For tests: ``model.bin`` (float16, fused QKV with zero K bias, the projection stored as an alias
of the embeddings, optionally int8 FFN weights with per-row scales), ``config.json``, a byte-level
``tokenizer.json`` ending at ``<|notimestamps|>`` and ``vocabulary.txt`` with the timestamps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.models.ct2.model_bin import write_model_bin
from harness.models.ct2.whisper_weights import GELU, sinusoids
from harness.models.whisper_layout import SPECIAL_TOKENS, timestamp_tokens


@dataclass(frozen=True)
class TinyWhisper:
    """Where the fixture was written and the variables it holds (float32 views of them)."""

    path: Path
    variables: dict[str, np.ndarray]
    text_tokens: int  # ids below this are byte-level text; then specials, then timestamps
    d_model: int
    encoder_layers: int
    decoder_layers: int


def tiny_ct2_whisper(
    out_dir: Path, *, seed: int = 0, int8_ffn: bool = False, d_model: int = 16
) -> TinyWhisper:
    """Write the fixture into ``out_dir`` (created) and describe it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    out_dir.mkdir(parents=True, exist_ok=True)
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tokenizer = Tokenizer(models.BPE(vocab={ch: i for i, ch in enumerate(alphabet)}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(list(SPECIAL_TOKENS))
    tokenizer.save(str(out_dir / "tokenizer.json"))
    words = [*alphabet, *SPECIAL_TOKENS, *timestamp_tokens()]
    (out_dir / "vocabulary.txt").write_text("\n".join(words) + "\n", encoding="utf-8")

    rng = np.random.default_rng(seed)
    d, ffn, enc_layers, dec_layers = d_model, 4 * d_model, 1, 2

    def rand(*shape: int) -> np.ndarray:
        return (0.1 * rng.standard_normal(shape)).astype(np.float16)

    def linear(prefix: str, rows: int, cols: int, bias: bool = True) -> dict[str, np.ndarray]:
        out = {f"{prefix}/weight": rand(rows, cols)}
        if bias:
            out[f"{prefix}/bias"] = rand(rows)
        return out

    def norm(prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}/gamma": 1 + rand(d), f"{prefix}/beta": rand(d)}

    def attention(prefix: str, fused: int) -> dict[str, np.ndarray]:
        out = norm(f"{prefix}/layer_norm") | linear(f"{prefix}/linear_0", fused * d, d)
        out[f"{prefix}/linear_0/bias"][d : 2 * d] = 0  # Whisper's K projection has no bias
        return out | linear(f"{prefix}/linear_1", d, d)

    def ffn_block(prefix: str) -> dict[str, np.ndarray]:
        out = norm(f"{prefix}/layer_norm") | linear(f"{prefix}/linear_0", ffn, d)
        return out | linear(f"{prefix}/linear_1", d, ffn)

    v: dict[str, np.ndarray] = {
        "encoder/num_heads": np.array(2, np.int16),
        "decoder/num_heads": np.array(2, np.int16),
        "decoder/activation": np.array(GELU, np.int8),
        "decoder/pre_norm": np.array(1, np.int8),
        "decoder/alibi": np.array(0, np.int8),
        "decoder/scale_embeddings": np.array(0, np.int8),
        "decoder/start_from_zero_embedding": np.array(0, np.int8),
        "decoder/alignment_heads": np.array(1, np.int16),
        "decoder/alignment_layer": np.array(-1, np.int16),
        "encoder/conv1/weight": rand(d, 80, 3),
        "encoder/conv1/bias": rand(d),
        "encoder/conv2/weight": rand(d, d, 3),
        "encoder/conv2/bias": rand(d),
        "encoder/position_encodings/encodings": sinusoids(1500, d).astype(np.float16),
        "decoder/position_encodings/encodings": rand(24, d),
        "decoder/embeddings/weight": rand(len(words), d),
    }
    v |= norm("encoder/layer_norm") | norm("decoder/layer_norm")
    for i in range(enc_layers):
        v |= attention(f"encoder/layer_{i}/self_attention", 3)
        v |= ffn_block(f"encoder/layer_{i}/ffn")
    for i in range(dec_layers):
        v |= attention(f"decoder/layer_{i}/self_attention", 3)
        v |= norm(f"decoder/layer_{i}/attention/layer_norm")
        v |= linear(f"decoder/layer_{i}/attention/linear_0", d, d)
        v |= linear(f"decoder/layer_{i}/attention/linear_1", 2 * d, d)
        v[f"decoder/layer_{i}/attention/linear_1/bias"][:d] = 0
        v |= linear(f"decoder/layer_{i}/attention/linear_2", d, d)
        v |= ffn_block(f"decoder/layer_{i}/ffn")
    if int8_ffn:
        for name in [k for k in v if k.endswith("/ffn/linear_0/weight")]:
            weight = v[name].astype(np.float32)
            scale = (127.0 / np.abs(weight).max(axis=1)).astype(np.float32)
            v[name] = np.rint(weight * scale[:, None]).astype(np.int8)
            v[f"{name}_scale"] = scale
    write_model_bin(
        out_dir / "model.bin", v, aliases={"decoder/projection/weight": "decoder/embeddings/weight"}
    )
    config = {
        "alignment_heads": [[1, 0], [1, 1]],
        "lang_ids": [len(alphabet) + 2],
        "suppress_ids": [1, 2],
        "suppress_ids_begin": [220, len(alphabet)],
    }
    (out_dir / "config.json").write_text(json.dumps(config), encoding="utf-8")
    floats = {k: a.astype(np.float32) for k, a in v.items()}
    return TinyWhisper(out_dir, floats, len(alphabet), d, enc_layers, dec_layers)
