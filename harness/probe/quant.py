"""Quantization settings from config.json, and real parameter counts from tensor headers.

MLX stores a quantized linear layer as ``<path>.weight`` (uint32 words, each packing 32 / bits
values), ``<path>.scales`` and, for affine mode, ``<path>.biases``. Its parameter count is the
unpacked weight (as ``mlx_lm.utils.get_total_parameters`` counts it); scales and biases are
quantization data, counted in bytes but not as parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.probe.files import TensorHeader
from harness.probe.types import LayerQuant, Quantization

# mlx-lm's defaults for a mode given without bits / group size.
MODE_DEFAULTS: Mapping[str, tuple[int, int]] = {
    "affine": (64, 4),
    "mxfp4": (32, 4),
    "nvfp4": (16, 4),
    "mxfp8": (32, 8),
}
_QUANT_KEYS = {"bits", "group_size", "mode", "quant_method"}


def parse_quantization(config: Mapping[str, Any]) -> Quantization | None:
    """``quantization`` (MLX) or ``quantization_config`` (Hugging Face), also under text_config."""
    text = config.get("text_config")
    sources: list[tuple[str, Any]] = [
        ("quantization", config.get("quantization")),
        ("quantization_config", config.get("quantization_config")),
    ]
    if isinstance(text, Mapping):
        sources.append(("quantization_config", text.get("quantization_config")))
    for key, value in sources:
        if isinstance(value, Mapping) and value:
            return _mlx(value) if key == "quantization" else _hf(value)
    return None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _mlx(q: Mapping[str, Any]) -> Quantization:
    mode = str(q.get("mode", "affine"))
    default_group, default_bits = MODE_DEFAULTS.get(mode, (64, 4))
    bits = _int(q.get("bits")) or default_bits
    group = _int(q.get("group_size")) or default_group
    overrides = []
    for path, value in q.items():
        if path in _QUANT_KEYS:
            continue
        if value is False:
            overrides.append(LayerQuant(path, None))
        elif isinstance(value, Mapping):
            overrides.append(
                LayerQuant(
                    path,
                    _int(value.get("bits")) or bits,
                    _int(value.get("group_size")) or group,
                    str(value.get("mode", mode)),
                )
            )
    return Quantization("mlx", bits, group, mode, tuple(sorted(overrides, key=lambda o: o.path)))


def _hf(q: Mapping[str, Any]) -> Quantization:
    method = str(q.get("quant_method", "unknown"))
    if method == "mlx" or ("bits" in q and "group_size" in q and "quant_method" not in q):
        return _mlx(q)
    bits = _int(q.get("bits"))
    if method in ("mxfp4", "nvfp4"):
        bits = 4
    elif method in ("mxfp8", "fp8"):
        bits = 8
    elif method == "bitsandbytes":
        bits = 4 if q.get("load_in_4bit") else 8 if q.get("load_in_8bit") else bits
    return Quantization(method, bits, _int(q.get("group_size")), q.get("fmt") or None)


@dataclass(frozen=True)
class Counts:
    parameters: int
    weights_bytes: int
    expert_parameters: int  # parameters in MoE expert tensors (all experts)
    dtype_bytes: Mapping[str, int]  # safetensors dtype -> bytes, for the dominant dtype
    tower_bytes: int = 0  # bytes of vision/audio towers and projectors (text-only loads drop them)


def count(tensors: Iterable[TensorHeader], quant: Quantization | None) -> Counts:
    """Parameters (quantized weights unpacked), bytes and MoE expert share of ``tensors``."""
    items = list(tensors)
    names = {t.name for t in items}
    params = total = experts = towers = 0
    dtype_bytes: dict[str, int] = {}
    for t in items:
        total += t.nbytes
        if is_tower(t.name):
            towers += t.nbytes
        dtype_bytes[t.dtype] = dtype_bytes.get(t.dtype, 0) + t.nbytes
        n = _parameters(t, names, quant)
        params += n
        if _is_expert(t.name):
            experts += n
    return Counts(params, total, experts, dtype_bytes, towers)


def _parameters(t: TensorHeader, names: set[str], quant: Quantization | None) -> int:
    base, _, leaf = t.name.rpartition(".")
    quantized = f"{base}.scales" in names
    if quantized and leaf in ("scales", "biases"):
        return 0
    if quantized and leaf == "weight" and t.dtype in ("U32", "U8", "I32") and t.shape:
        bits = layer_bits(quant, base)
        word = 32 if t.dtype in ("U32", "I32") else 8
        return t.elements * word // bits
    return t.elements


def layer_bits(quant: Quantization | None, path: str) -> int:
    """Bits of the quantized layer at ``path`` (per-layer override, else the default)."""
    if quant is None:
        return 4
    for override in quant.overrides:
        matches = override.path == path or path.endswith("." + override.path)
        if matches and override.bits:
            return override.bits
    return int(quant.bits or 4)


# Top-level modules of the non-text parts of multimodal checkpoints (Hugging Face and MLX names);
# mlx-lm's text-only modules for such models (qwen2_vl, mistral3 for llava, ...) drop them.
TOWER_PREFIXES = (
    "visual",
    "vision_tower",
    "vision_model",
    "multi_modal_projector",
    "mm_projector",
    "audio_tower",
    "audio_model",
)


def is_tower(name: str) -> bool:
    """True for a tensor of a vision/audio tower or projector (also under ``model.``)."""
    parts = name.split(".")
    head = parts[1] if parts[0] == "model" and len(parts) > 1 else parts[0]
    return head in TOWER_PREFIXES


def _is_expert(name: str) -> bool:
    return ".experts." in name or ".switch_mlp." in name or ".block_sparse_moe.experts" in name


def active_parameters(
    counts: Counts, num_experts: int | None, experts_per_token: int | None
) -> int | None:
    """Parameters used per token for a mixture of experts (shared weights + top-k experts)."""
    if not num_experts or not experts_per_token or not counts.expert_parameters:
        return None
    used = counts.expert_parameters * experts_per_token // num_experts
    return counts.parameters - counts.expert_parameters + used
