"""Turn one GGUF tensor into MLX-ready numpy arrays.

Dense types come through as they are. The legacy block types Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 are,
when kept, repacked bit-exactly into MLX affine quantization (group size 32, ``value = scale *
q + bias``, float16 scales and biases as stored in the file, values packed little-endian into
uint32). Everything else, and every type when not kept, is dequantized to float32 with
``gguf.quants.dequantize`` (the reference implementation shipped with llama.cpp).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from harness.models.gguf.errors import GGUFImportError
from harness.models.gguf.ggml import DENSE, SUPPORTED, native_bits
from harness.models.gguf.reader import GGUFFile, TensorInfo, tensor_bytes

GROUP_SIZE = 32


@dataclass(frozen=True)
class MLXTensor:
    """Dense values, or an MLX affine-quantized triple (packed uint32 weight, scales, biases).

    ``dtype`` is the float dtype to store: of the values when dense, of scales/biases when
    quantized. BF16 values travel as float32 (exactly) and are cast back when written.
    """

    weight: np.ndarray
    dtype: str
    scales: np.ndarray | None = None
    biases: np.ndarray | None = None
    bits: int | None = None

    @property
    def quantized(self) -> bool:
        return self.bits is not None

    def map_rows(self, fn: Callable[[np.ndarray], np.ndarray]) -> MLXTensor:
        """Apply a row-wise operation (e.g. a permutation) to every array of the tensor."""
        return replace(
            self,
            weight=fn(self.weight),
            scales=None if self.scales is None else fn(self.scales),
            biases=None if self.biases is None else fn(self.biases),
        )


def convert_tensor(gguf: GGUFFile, info: TensorInfo, *, keep_quantized: bool) -> MLXTensor:
    """Read ``info`` from ``gguf``; keep MLX-native block types quantized if asked."""
    if info.type_name not in SUPPORTED:
        raise GGUFImportError(
            gguf.path,
            f"unsupported tensor type {info.type_name} (tensor {info.name!r})",
            f"Supported types: {', '.join(sorted(SUPPORTED))}; re-quantize the model with "
            "llama.cpp's llama-quantize to one of them (e.g. Q8_0 or Q4_K_M).",
        )
    raw = tensor_bytes(gguf, info)
    if info.type_name in DENSE:
        return _dense(raw, info)
    bits = native_bits(info.type_name)
    if keep_quantized and bits is not None:
        weight, scales, biases = _repack(raw, info.type_name)
        shape = info.shape[:-1]
        return MLXTensor(
            weight=weight.reshape(*shape, -1),
            dtype="float16",
            scales=scales.reshape(*shape, -1),
            biases=biases.reshape(*shape, -1),
            bits=bits,
        )
    return MLXTensor(weight=dequantize(raw, info).reshape(info.shape), dtype="float32")


def dequantize(raw: np.ndarray, info: TensorInfo) -> np.ndarray:
    """Reference dequantization of a block-quantized tensor to float32 (rows x row length)."""
    from gguf import GGMLQuantizationType
    from gguf.quants import dequantize as gguf_dequantize

    qtype = GGMLQuantizationType[info.type_name]
    out = gguf_dequantize(np.ascontiguousarray(raw), qtype)
    return np.asarray(out, dtype=np.float32)


def _dense(raw: np.ndarray, info: TensorInfo) -> MLXTensor:
    flat = raw.reshape(-1)
    if info.type_name == "F32":
        return MLXTensor(weight=flat.view("<f4").reshape(info.shape), dtype="float32")
    if info.type_name == "F16":
        return MLXTensor(weight=flat.view("<f2").reshape(info.shape), dtype="float16")
    as_f32 = (flat.view("<u2").astype(np.uint32) << 16).view(np.float32)  # BF16, exact
    return MLXTensor(weight=as_f32.reshape(info.shape), dtype="bfloat16")


def _repack(raw: np.ndarray, type_name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GGUF blocks (rows x bytes) -> MLX (packed uint32, float16 scales, float16 biases)."""
    rows = raw.shape[0]
    sizes = {"Q4_0": 18, "Q4_1": 20, "Q5_0": 22, "Q5_1": 24, "Q8_0": 34}
    blocks = np.ascontiguousarray(raw).reshape(rows, -1, sizes[type_name])
    d = blocks[..., 0:2].copy().view("<f2")[..., 0]
    if type_name == "Q8_0":
        q8 = (blocks[..., 2:34].view(np.int8).astype(np.int16) + 128).astype(np.uint8)
        return _pack(q8, 8), d, (d.astype(np.float32) * -128).astype(np.float16)
    has_min = type_name in ("Q4_1", "Q5_1")
    m = blocks[..., 2:4].copy().view("<f2")[..., 0] if has_min else None
    start = 4 if has_min else 2
    if type_name.startswith("Q5"):
        qh = blocks[..., start : start + 4].copy().view("<u4")[..., 0]
        start += 4
    qs = blocks[..., start : start + 16]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=-1)  # elements 0..15 low, 16..31 high nibbles
    if type_name.startswith("Q5"):
        high = (qh[..., None] >> np.arange(32, dtype=np.uint32)) & 1
        q = q | (high.astype(np.uint8) << 4)
    bits = 5 if type_name.startswith("Q5") else 4
    if m is None:
        offset = -(1 << (bits - 1))  # Q4_0: d * (q - 8); Q5_0: d * (q - 16)
        m = (d.astype(np.float32) * offset).astype(np.float16)
    return _pack(q, bits), d, m


def _pack(q: np.ndarray, bits: int) -> np.ndarray:
    """Pack unsigned ``bits``-wide values (rows x blocks x 32) as MLX does: a little-endian
    bit stream stored in uint32 words."""
    rows = q.shape[0]
    q = np.ascontiguousarray(q).reshape(rows, -1)
    if bits == 8:
        packed = q
    elif bits == 4:
        packed = q[:, 0::2] | (q[:, 1::2] << 4)
    else:
        eights = q.reshape(rows, -1, 8).astype(np.uint64)
        shifts = np.arange(8, dtype=np.uint64) * np.uint64(bits)
        words = np.bitwise_or.reduce(eights << shifts, axis=-1)
        packed = words[..., None].view(np.uint8).reshape(rows, -1, 8)[..., :bits]
    return np.ascontiguousarray(packed).reshape(rows, -1).view("<u4")


def unpermute_rows(tensor: MLXTensor, heads: int) -> MLXTensor:
    """Undo llama.cpp's rope permutation of a Q or K projection.

    llama.cpp stores each head's rows interleaved for its rope; viewing the rows as
    (heads, head_dim/2, 2) and swapping the last two axes restores the Hugging Face order.
    """
    rows = tensor.weight.shape[0]
    if heads <= 0 or rows % (2 * heads):
        raise ValueError(f"cannot un-permute {rows} rows over {heads} heads")
    order = np.arange(rows).reshape(heads, rows // heads // 2, 2).swapaxes(1, 2).reshape(-1)
    return tensor.map_rows(lambda a: np.ascontiguousarray(a[order]))
