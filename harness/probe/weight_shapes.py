"""Rule: the decoder's tensor shapes (safetensors headers) agree with config.json.

MLX loads weights strictly: a parameter whose shape differs from the one the config builds
fails the load ("Expected shape ... but received ...") after every file has been read, and a
missing layer fails it too. These checks catch that before any load, naming the file, the
tensor and the config field:

- ``embed_tokens`` and ``lm_head`` rows against ``vocab_size`` (plus the extra embedding rows
  a family builds on purpose: mlx-vlm's Mllama embeds ``vocab_size + 8``); ``embed_tokens``
  columns against ``hidden_size``;
- each layer's ``self_attn.q_proj`` rows against ``num_attention_heads x head_dim``
  (``head_dim`` defaults to hidden_size / heads; twice that is accepted for gated attention,
  as Qwen3-Next stores it; skipped for multi-head latent attention, whose query is shaped by
  its LoRA ranks);
- the decoder layers present against ``num_hidden_layers`` (multi-token-prediction layers
  beyond it, ``num_nextn_predict_layers``, are allowed: mlx-lm drops them).

Quantized MLX weights (``<path>.scales`` beside a uint32/uint8 ``<path>.weight``) keep their
rows and pack ``32 / bits`` (``8 / bits``) values per column word, so columns are compared
unpacked at the layer's bits. Tied embeddings need no ``lm_head``: only a present one is
checked. Tensors are found under the decoder prefixes of mlx-lm and mlx-vlm checkpoints
(``model.``, ``language_model.model.``, ``model.language_model.``, ...); other layouts, and
towers, are left alone, so the rule stays silent rather than guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from harness.probe.files import TensorHeader
from harness.probe.quant import is_tower, layer_bits
from harness.probe.types import Finding, Quantization, ReasonCode

DECODER_PREFIXES = (
    "model.language_model.",
    "language_model.model.",
    "model.",
    "language_model.",
    "",
)
NESTED = ("text_config", "llm_config", "language_config")  # as arch.text_config merges them
MLA_KEYS = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim")
PACKED = {"U32": 32, "I32": 32, "U8": 8}


def shape_findings(
    config: Mapping[str, Any], tensors: Sequence[TensorHeader], quant: Quantization | None
) -> tuple[Finding, ...]:
    """CORRUPT_MODEL findings for decoder tensors whose shapes contradict ``config``."""
    text = [t for t in tensors if not is_tower(t.name)]
    by_name = {t.name: t for t in text}
    prefix = _decoder_prefix(by_name)
    if prefix is None:
        return ()
    messages = [
        *_vocab(config, by_name, prefix, quant),
        *_attention(config, by_name, prefix),
        *_layers(config, text, prefix),
    ]
    return tuple(Finding(ReasonCode.CORRUPT_MODEL, m) for m in messages)


def _decoder_prefix(by_name: Mapping[str, TensorHeader]) -> str | None:
    for prefix in DECODER_PREFIXES:
        if f"{prefix}embed_tokens.weight" in by_name:
            return prefix
    for prefix in DECODER_PREFIXES:
        if any(n.startswith(f"{prefix}layers.") for n in by_name):
            return prefix
    return None


def config_int(config: Mapping[str, Any], *keys: str) -> tuple[str, int] | None:
    """(field as written in config.json, value) of the first key set, text_config first."""
    scopes: list[tuple[str, Mapping[str, Any]]] = []
    for key in NESTED:
        nested = config.get(key)
        if isinstance(nested, Mapping) and nested:
            scopes.append((f"{key}.", nested))
            break
    scopes.append(("", config))
    for where, scope in scopes:
        for key in keys:
            value = scope.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return where + key, value
    return None


# embedding rows a family's model class adds to vocab_size (lm_head keeps vocab_size)
EXTRA_EMBED_ROWS: Mapping[str, int] = MappingProxyType({"mllama": 8})


def _vocab(
    config: Mapping[str, Any],
    by_name: Mapping[str, TensorHeader],
    prefix: str,
    quant: Quantization | None,
) -> list[str]:
    found = []
    embed = by_name.get(f"{prefix}embed_tokens.weight")
    heads = [t for n, t in by_name.items() if n.endswith("lm_head.weight")]
    vocab = config_int(config, "vocab_size")
    extra = EXTRA_EMBED_ROWS.get(str(config.get("model_type")), 0)
    for tensor in ([embed] if embed else []) + heads:
        rows = vocab[1] + (extra if tensor is embed else 0) if vocab else None
        if vocab and len(tensor.shape) == 2 and tensor.shape[0] != rows:
            found.append(_says(tensor, f"has {tensor.shape[0]} rows", vocab))
    hidden = config_int(config, "hidden_size", "d_model", "n_embd")
    if embed is not None and hidden and len(embed.shape) == 2:
        columns, packed = _columns(embed, by_name, quant)
        if columns is not None and columns != hidden[1]:
            unpacked = " (unpacked)" if packed else ""
            found.append(_says(embed, f"has {columns} columns{unpacked}", hidden))
    return found


def _attention(
    config: Mapping[str, Any], by_name: Mapping[str, TensorHeader], prefix: str
) -> list[str]:
    heads = config_int(config, "num_attention_heads", "n_head", "n_heads")
    if heads is None or any(config_int(config, k) for k in MLA_KEYS):
        return []
    head_dim = config_int(config, "head_dim")
    hidden = config_int(config, "hidden_size", "d_model", "n_embd")
    if head_dim is not None:
        dim, field = head_dim[1], f"{heads[0]} x {head_dim[0]}"
    elif hidden is not None:
        dim, field = hidden[1] // heads[1], f"{heads[0]} x ({hidden[0]} / {heads[0]})"
    else:
        return []
    want = heads[1] * dim
    pattern = re.compile(rf"^{re.escape(prefix)}layers\.(\d+)\.self_attn\.q_proj\.weight$")
    queries = sorted(
        (int(m.group(1)), t) for n, t in by_name.items() if (m := pattern.match(n)) is not None
    )
    for _, tensor in queries:
        rows = tensor.shape[0] if tensor.shape else 0
        if rows not in (want, 2 * want):
            got = f"{heads[1]} x {dim} = {want}"
            return [_says(tensor, f"has {rows} rows", (field, got))]
    return []


def _layers(config: Mapping[str, Any], tensors: Sequence[TensorHeader], prefix: str) -> list[str]:
    layers = config_int(config, "num_hidden_layers", "n_layer", "n_layers")
    if layers is None:
        return []
    pattern = re.compile(rf"^{re.escape(prefix)}layers\.(\d+)\.")
    present: dict[int, str] = {}
    for t in tensors:
        m = pattern.match(t.name)
        if m is not None:
            present.setdefault(int(m.group(1)), t.file)
    if not present:
        return []
    missing = [i for i in range(layers[1]) if i not in present]
    extra = [i for i in present if i >= layers[1]]
    nextn = config_int(config, "num_nextn_predict_layers")
    if not missing and len(extra) <= (nextn[1] if nextn else 0):
        return []
    where = _files(sorted(set(present.values())))
    what = f"layer {missing[0]} missing" if missing else f"layer {max(extra)} beyond it"
    return [
        f"{where}: the weights hold {len(present)} decoder layers ({prefix}layers.*, {what}) "
        f"but config.json {layers[0]} is {layers[1]}"
    ]


def _columns(
    tensor: TensorHeader, by_name: Mapping[str, TensorHeader], quant: Quantization | None
) -> tuple[int | None, bool]:
    """Columns as the model sees them, and whether they were unpacked from words."""
    base = tensor.name.removesuffix(".weight")
    word = PACKED.get(tensor.dtype)
    if f"{base}.scales" not in by_name or word is None:
        return tensor.shape[-1], False
    if quant is None:
        return None, True  # packed, but config.json does not say at how many bits
    return tensor.shape[-1] * word // layer_bits(quant, base), True


def _says(tensor: TensorHeader, has: str, field: tuple[str, Any]) -> str:
    return (
        f"{tensor.file or 'weights'}: {tensor.name} {has} but config.json {field[0]} is {field[1]}"
    )


def _files(files: Sequence[str]) -> str:
    if not files or not files[0]:
        return "weights"
    return files[0] if len(files) == 1 else f"{files[0]} and {len(files) - 1} more"
