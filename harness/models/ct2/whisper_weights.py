"""CTranslate2 ``WhisperSpec`` variables -> Hugging Face Whisper weights (float32, numpy).

The names written are those of ``openai/whisper-*`` repositories (``model.encoder.layers.0.
self_attn.q_proj.weight``, PyTorch conv layout), which mlx-audio's ``Model.sanitize`` renames
and transposes. CTranslate2 fuses what Hugging Face keeps apart:

- self-attention ``linear_0`` is Q, K, V stacked on rows; K has no bias in Whisper, and the
  zeros CTranslate2 stores for it are dropped (a key bias adds ``q . b`` to every score of a
  query, which softmax cancels, so dropping it is exact whatever its value);
- cross-attention ``linear_0`` is Q and ``linear_1`` is K, V stacked;
- layer norms are ``gamma``/``beta`` (-> ``weight``/``bias``);
- ``decoder/projection`` is the embedding table (tied, stored as an alias);
- int8/int16 weights come with ``<name>_scale`` and are dequantized (``q / scale``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.models.ct2.errors import CT2FormatError
from harness.models.ct2.model_bin import CT2Model

WHISPER_SPEC = "WhisperSpec"
GELU = 3  # CTranslate2's Activation enum: RELU, GELUTanh, SWISH, GELU, ...

# Settings CTranslate2 writes as scalars: those Whisper needs at one value, those without effect.
_REQUIRED_SCALARS = {
    "decoder/activation": GELU,
    "decoder/pre_norm": 1,
    "decoder/alibi": 0,
    "decoder/scale_embeddings": 0,
    "decoder/start_from_zero_embedding": 0,
}
_IGNORED_SCALARS = ("decoder/alignment_heads", "decoder/alignment_layer")
_HEAD_SCALARS = ("encoder/num_heads", "decoder/num_heads")

_LAYER = re.compile(r"^(encoder|decoder)/layer_(\d+)/(.+)/(\w+)$")
_LAYER_MODULES = {
    "self_attention/layer_norm": "self_attn_layer_norm",
    "self_attention/linear_0": "self_attn.qkv",
    "self_attention/linear_1": "self_attn.out_proj",
    "ffn/layer_norm": "final_layer_norm",
    "ffn/linear_0": "fc1",
    "ffn/linear_1": "fc2",
}
_CROSS_MODULES = {
    "attention/layer_norm": "encoder_attn_layer_norm",
    "attention/linear_0": "encoder_attn.q_proj",
    "attention/linear_1": "encoder_attn.kv",
    "attention/linear_2": "encoder_attn.out_proj",
}
_TOP_MODULES = {
    "encoder/conv1": "encoder.conv1",
    "encoder/conv2": "encoder.conv2",
    "encoder/layer_norm": "encoder.layer_norm",
    "encoder/position_encodings": "encoder.embed_positions",
    "decoder/layer_norm": "decoder.layer_norm",
    "decoder/position_encodings": "decoder.embed_positions",
    "decoder/embeddings": "decoder.embed_tokens",
    "decoder/projection": "proj_out",
}
_LEAVES = {"weight": "weight", "bias": "bias", "gamma": "weight", "beta": "bias"}
_LEAVES_POSITIONS = {"encodings": "weight"}


@dataclass(frozen=True)
class WhisperDims:
    """Sizes read off the weights (Hugging Face config names)."""

    num_mel_bins: int
    d_model: int
    encoder_layers: int
    encoder_attention_heads: int
    decoder_layers: int
    decoder_attention_heads: int
    ffn_dim: int
    max_source_positions: int
    max_target_positions: int
    vocab_size: int


def whisper_weights(model: CT2Model) -> tuple[dict[str, np.ndarray], WhisperDims]:
    """Hugging Face-named float32 weights and the dimensions, checked against each other."""
    if model.spec != WHISPER_SPEC:
        raise CT2FormatError(model.path, f"spec is {model.spec!r}, not {WHISPER_SPEC!r}")
    arrays = dict(model.variables)
    for alias in model.aliases:
        aliased = model.get(alias)
        if aliased is None:
            raise CT2FormatError(model.path, f"alias {alias!r} points to a missing variable")
        arrays[alias] = aliased
        scale = model.get(f"{alias}_scale")
        if scale is not None:
            arrays[f"{alias}_scale"] = scale
    scalars = {k: v for k, v in arrays.items() if v.ndim == 0}
    heads = _check_scalars(model.path, scalars)
    hf: dict[str, np.ndarray] = {}
    unexpected: list[str] = []
    for name, value in sorted(arrays.items()):
        if value.ndim == 0 or name.endswith("_scale"):
            continue
        target = _hf_name(name)
        if target is None:
            unexpected.append(name)
            continue
        hf[target] = _dequantize(model, name, value, arrays.get(f"{name}_scale"))
    if unexpected:
        shown = ", ".join(unexpected[:3]) + (" ..." if len(unexpected) > 3 else "")
        raise CT2FormatError(
            model.path,
            f"{len(unexpected)} variables unknown to the Whisper converter: {shown}",
            "Only CTranslate2 WhisperSpec (openai/whisper-*) models are supported",
        )
    _untie(model.path, hf)
    _split_fused(model.path, hf)
    dims = _dims(model.path, hf, heads)
    _check_shapes(model.path, hf, dims)
    _check_encoder_positions(model.path, hf["model.encoder.embed_positions.weight"])
    return hf, dims


def sinusoids(length: int, channels: int, max_timescale: float = 10000.0) -> np.ndarray:
    """Whisper's fixed encoder position table (the formula of openai/whisper and mlx-audio)."""
    increment = math.log(max_timescale) / (channels // 2 - 1)
    inv = np.exp(-increment * np.arange(channels // 2, dtype=np.float64))
    scaled = np.arange(length, dtype=np.float64)[:, None] * inv[None, :]
    return np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1).astype(np.float32)


def _check_scalars(path: Path, scalars: dict[str, np.ndarray]) -> tuple[int, int]:
    for name, want in _REQUIRED_SCALARS.items():
        if name in scalars and int(scalars[name]) != want:
            raise CT2FormatError(
                path, f"{name} = {int(scalars[name])}, Whisper needs {want}", "Not a Whisper model"
            )
    known = {*_REQUIRED_SCALARS, *_IGNORED_SCALARS, *_HEAD_SCALARS}
    for name, value in scalars.items():
        if name in known or name.endswith(("/keep_in_float32", "_scale")):
            continue
        if np.any(value != 0):  # options CTranslate2 leaves at zero when unused
            raise CT2FormatError(path, f"unsupported setting {name} = {value.item()}")
    missing = [name for name in _HEAD_SCALARS if name not in scalars]
    if missing:
        raise CT2FormatError(path, f"missing {', '.join(missing)}", "Not a Whisper model")
    enc, dec = (int(scalars[name]) for name in _HEAD_SCALARS)
    return enc, dec


def _hf_name(name: str) -> str | None:
    match = _LAYER.match(name)
    if match:
        side, index, module, leaf = match.groups()
        table = _LAYER_MODULES | (_CROSS_MODULES if side == "decoder" else {})
        mapped = table.get(module)
        if mapped is None or leaf not in _LEAVES:
            return None
        return f"model.{side}.layers.{int(index)}.{mapped}.{_LEAVES[leaf]}"
    module, _, leaf = name.rpartition("/")
    mapped = _TOP_MODULES.get(module)
    leaves = _LEAVES_POSITIONS if module.endswith("position_encodings") else _LEAVES
    if mapped is None or leaf not in leaves:
        return None
    prefix = "" if mapped == "proj_out" else "model."
    return f"{prefix}{mapped}.{leaves[leaf]}"


def _dequantize(
    model: CT2Model, name: str, value: np.ndarray, scale: np.ndarray | None
) -> np.ndarray:
    if scale is None:
        if value.dtype.kind != "f":
            raise CT2FormatError(model.path, f"{name} is {value.dtype} without a scale")
        return value.astype(np.float32)
    scale = scale.astype(np.float32)
    if scale.ndim == 1 and value.ndim == 2:
        scale = scale[:, None]  # int8: one scale per output row
    return (value.astype(np.float32) / scale).astype(np.float32)


def _untie(path: Path, hf: dict[str, np.ndarray]) -> None:
    projection = hf.pop("proj_out.weight", None)
    embedding = hf.get("model.decoder.embed_tokens.weight")
    if (
        projection is not None
        and embedding is not None
        and not np.array_equal(projection, embedding)
    ):
        raise CT2FormatError(path, "decoder/projection differs from the embeddings (untied)")


def _split_fused(path: Path, hf: dict[str, np.ndarray]) -> None:
    for key in [k for k in hf if ".qkv." in k or ".kv." in k]:
        value = hf.pop(key)
        fused = ".qkv." if ".qkv." in key else ".kv."
        names = ("q_proj", "k_proj", "v_proj") if fused == ".qkv." else ("k_proj", "v_proj")
        if value.shape[0] % len(names):
            raise CT2FormatError(path, f"{key}: {value.shape[0]} rows do not split {len(names)}")
        for part, piece in zip(names, np.split(value, len(names), axis=0), strict=True):
            if part == "k_proj" and key.endswith(".bias"):
                continue  # Whisper's key projection has no bias (see the module docstring)
            hf[key.replace(fused, f".{part}.")] = np.ascontiguousarray(piece)


def _dims(path: Path, hf: dict[str, np.ndarray], heads: tuple[int, int]) -> WhisperDims:
    def get(key: str) -> np.ndarray:
        if key not in hf:
            raise CT2FormatError(path, f"missing the variable that becomes {key}")
        return hf[key]

    def layers(side: str) -> int:
        found = {int(k.split(".")[3]) for k in hf if k.startswith(f"model.{side}.layers.")}
        if found != set(range(len(found))) or not found:
            raise CT2FormatError(path, f"{side} layer indices {sorted(found)} are not 0..n-1")
        return len(found)

    embed = get("model.decoder.embed_tokens.weight")
    ffn = int(get("model.encoder.layers.0.fc1.weight").shape[0])
    if ffn != 4 * embed.shape[1]:
        raise CT2FormatError(
            path,
            f"feed-forward width {ffn} is not 4 x d_model ({embed.shape[1]})",
            "Whisper (and mlx-audio's Whisper class) fix it at 4 x d_model",
        )
    return WhisperDims(
        num_mel_bins=int(get("model.encoder.conv1.weight").shape[1]),
        d_model=int(embed.shape[1]),
        encoder_layers=layers("encoder"),
        encoder_attention_heads=heads[0],
        decoder_layers=layers("decoder"),
        decoder_attention_heads=heads[1],
        ffn_dim=ffn,
        max_source_positions=int(get("model.encoder.embed_positions.weight").shape[0]),
        max_target_positions=int(get("model.decoder.embed_positions.weight").shape[0]),
        vocab_size=int(embed.shape[0]),
    )


def expected_shapes(dims: WhisperDims) -> dict[str, tuple[int, ...]]:
    """Every Hugging Face weight of a Whisper with ``dims`` and its shape."""
    d, f = dims.d_model, dims.ffn_dim
    shapes: dict[str, tuple[int, ...]] = {
        "model.encoder.conv1.weight": (d, dims.num_mel_bins, 3),
        "model.encoder.conv1.bias": (d,),
        "model.encoder.conv2.weight": (d, d, 3),
        "model.encoder.conv2.bias": (d,),
        "model.encoder.embed_positions.weight": (dims.max_source_positions, d),
        "model.encoder.layer_norm.weight": (d,),
        "model.encoder.layer_norm.bias": (d,),
        "model.decoder.embed_tokens.weight": (dims.vocab_size, d),
        "model.decoder.embed_positions.weight": (dims.max_target_positions, d),
        "model.decoder.layer_norm.weight": (d,),
        "model.decoder.layer_norm.bias": (d,),
    }
    blocks = {"self_attn": "self_attn_layer_norm"}
    for side, count in (("encoder", dims.encoder_layers), ("decoder", dims.decoder_layers)):
        attn = blocks | ({"encoder_attn": "encoder_attn_layer_norm"} if side == "decoder" else {})
        for i in range(count):
            p = f"model.{side}.layers.{i}."
            for module, norm in attn.items():
                for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    shapes[f"{p}{module}.{proj}.weight"] = (d, d)
                    if proj != "k_proj":
                        shapes[f"{p}{module}.{proj}.bias"] = (d,)
                shapes[f"{p}{norm}.weight"] = shapes[f"{p}{norm}.bias"] = (d,)
            shapes[f"{p}fc1.weight"], shapes[f"{p}fc1.bias"] = (f, d), (f,)
            shapes[f"{p}fc2.weight"], shapes[f"{p}fc2.bias"] = (d, f), (d,)
            shapes[f"{p}final_layer_norm.weight"] = shapes[f"{p}final_layer_norm.bias"] = (d,)
    return shapes


def _check_shapes(path: Path, hf: dict[str, np.ndarray], dims: WhisperDims) -> None:
    expected = expected_shapes(dims)
    missing = sorted(set(expected) - set(hf))
    extra = sorted(set(hf) - set(expected))
    if missing or extra:
        what = f"missing {missing[:3]}" if missing else f"unexpected {extra[:3]}"
        raise CT2FormatError(path, f"incomplete Whisper weights: {what}")
    wrong = [k for k, shape in expected.items() if hf[k].shape != shape]
    if wrong:
        key = wrong[0]
        raise CT2FormatError(
            path, f"{key} has shape {list(hf[key].shape)}, expected {list(expected[key])}"
        )


def _check_encoder_positions(path: Path, table: np.ndarray) -> None:
    """mlx-audio recomputes this table; refuse a model whose stored one differs."""
    error = float(np.max(np.abs(table - sinusoids(*table.shape))))
    if error > 1e-2:
        raise CT2FormatError(path, f"encoder position encodings are not sinusoids (max {error})")
