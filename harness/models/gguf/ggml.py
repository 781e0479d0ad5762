"""GGML tensor types: block geometry, and which ones the importer can keep or dequantize."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GGMLType:
    """One GGML tensor type: ``block_size`` elements are stored in ``type_size`` bytes."""

    type_id: int
    name: str
    block_size: int
    type_size: int


_QK_K = 256

# (id, name, elements per block, bytes per block), as in ggml.h / gguf-py constants.
GGML_TYPES: tuple[GGMLType, ...] = tuple(
    GGMLType(*row)
    for row in (
        (0, "F32", 1, 4),
        (1, "F16", 1, 2),
        (2, "Q4_0", 32, 2 + 16),
        (3, "Q4_1", 32, 2 + 2 + 16),
        (6, "Q5_0", 32, 2 + 4 + 16),
        (7, "Q5_1", 32, 2 + 2 + 4 + 16),
        (8, "Q8_0", 32, 2 + 32),
        (9, "Q8_1", 32, 4 + 4 + 32),
        (10, "Q2_K", _QK_K, 2 + 2 + _QK_K // 16 + _QK_K // 4),
        (11, "Q3_K", _QK_K, 2 + _QK_K // 4 + _QK_K // 8 + 12),
        (12, "Q4_K", _QK_K, 2 + 2 + _QK_K // 2 + 12),
        (13, "Q5_K", _QK_K, 2 + 2 + _QK_K // 2 + _QK_K // 8 + 12),
        (14, "Q6_K", _QK_K, 2 + _QK_K // 2 + _QK_K // 4 + _QK_K // 16),
        (15, "Q8_K", _QK_K, 4 + _QK_K + _QK_K // 8),
        (16, "IQ2_XXS", _QK_K, 2 + _QK_K // 4),
        (17, "IQ2_XS", _QK_K, 2 + _QK_K // 4 + _QK_K // 32),
        (18, "IQ3_XXS", _QK_K, 2 + _QK_K // 4 + _QK_K // 8),
        (19, "IQ1_S", _QK_K, 2 + _QK_K // 8 + _QK_K // 16),
        (20, "IQ4_NL", 32, 2 + 16),
        (21, "IQ3_S", _QK_K, 2 + _QK_K // 4 + _QK_K // 8 + _QK_K // 32 + 4),
        (22, "IQ2_S", _QK_K, 2 + _QK_K // 4 + _QK_K // 16),
        (23, "IQ4_XS", _QK_K, 2 + 2 + _QK_K // 2 + _QK_K // 64),
        (24, "I8", 1, 1),
        (25, "I16", 1, 2),
        (26, "I32", 1, 4),
        (27, "I64", 1, 8),
        (28, "F64", 1, 8),
        (29, "IQ1_M", _QK_K, _QK_K // 8 + _QK_K // 16 + _QK_K // 32),
        (30, "BF16", 1, 2),
        (34, "TQ1_0", _QK_K, 2 + 4 * 13),
        (35, "TQ2_0", _QK_K, 2 + 64),
        (39, "MXFP4", 32, 1 + 16),
        (40, "NVFP4", 64, 4 + 32),
        (41, "Q1_0", 128, 2 + 16),
    )
)

# Dense float types, copied as they are (or cast) without any dequantization.
DENSE = frozenset({"F32", "F16", "BF16"})

# Block types whose layout is exactly MLX's affine quantization with group size 32:
# value = scale * q + bias. dtype="keep" keeps them quantized; name -> bits.
MLX_NATIVE_BITS: tuple[tuple[str, int], ...] = (
    ("Q4_0", 4),
    ("Q4_1", 4),
    ("Q5_0", 5),
    ("Q5_1", 5),
    ("Q8_0", 8),
)

# Types dequantized to float32 through ``gguf.quants.dequantize`` (the reference implementation).
DEQUANTIZED = frozenset({"Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"})

SUPPORTED = DENSE | {name for name, _ in MLX_NATIVE_BITS} | DEQUANTIZED


def ggml_type(type_id: int) -> GGMLType | None:
    """The GGML type with this id, or None for an id this table does not know."""
    for entry in GGML_TYPES:
        if entry.type_id == type_id:
            return entry
    return None


def native_bits(name: str) -> int | None:
    """MLX affine bit width for a GGML block type MLX can hold exactly, else None."""
    return dict(MLX_NATIVE_BITS).get(name)
