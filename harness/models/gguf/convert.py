"""``import_gguf``: convert a GGUF language model into an mlx-lm model directory.

The directory holds ``config.json`` (with a ``quantization`` section when layers stay
quantized, including per-layer overrides such as an 8-bit embedding among 4-bit layers),
``model.safetensors``, ``tokenizer.json`` and ``tokenizer_config.json``.

``dtype`` chooses the weights' precision:

* ``keep`` (default): dense tensors keep their stored type (F32, F16, BF16); Q4_0/Q4_1/Q5_0/
  Q5_1/Q8_0 stay quantized as MLX affine group-32 layers (4/4/5/5/8 bits, bit-exact); K-quants
  (Q2_K..Q6_K) are dequantized to float32, since their super-block scales do not map onto MLX.
* ``float32`` / ``float16`` / ``bfloat16``: every tensor is dequantized with the reference
  dequantizer and stored in that type. On CPU prefer float32: MLX's float16 is ~35x slower there.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from harness.models.gguf.archs import NORM_MINUS_ONE, UNPERMUTE_K, UNPERMUTE_Q, ArchSpec, arch_spec
from harness.models.gguf.errors import GGUFImportError
from harness.models.gguf.reader import GGUFFile, TensorInfo, read_gguf
from harness.models.gguf.tensors import GROUP_SIZE, MLXTensor, convert_tensor, unpermute_rows
from harness.models.gguf.tokenizer import build_tokenizer

CONVERTER_VERSION = "1"
DTYPES = ("keep", "float32", "float16", "bfloat16")
OUTPUT_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")


@dataclass(frozen=True)
class ImportSummary:
    """What one conversion did; ``to_dict`` gives a JSON-ready form."""

    source: Path
    output: Path
    architecture: str
    model_type: str
    dtype: str
    tensor_types: Mapping[str, int]  # GGUF tensor type -> number of tensors in the file
    kept_quantized: int  # tensors written as MLX quantized layers
    dequantized: int  # block-quantized tensors expanded to dense
    output_bytes: int
    seconds: float
    converter_version: str = CONVERTER_VERSION

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data.update(
            source=str(self.source),
            output=str(self.output),
            tensor_types=dict(self.tensor_types),
            seconds=round(self.seconds, 3),
        )
        return data


def import_gguf(src: Path, out: Path, dtype: str = "keep") -> ImportSummary:
    """Convert the GGUF file ``src`` into the mlx-lm model directory ``out`` (created or
    overwritten file by file). Raises :class:`GGUFImportError` for any problem with the file."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    started = time.perf_counter()
    src, out = Path(src), Path(out)
    gguf = read_gguf(src)
    spec = arch_spec(gguf)
    with _problem(src, "invalid model metadata", "The file's metadata is inconsistent."):
        config = spec.build_config(gguf)
    with _problem(src, "cannot build the tokenizer", "The tokenizer metadata is inconsistent."):
        tokenizer = build_tokenizer(gguf)
    with _problem(src, "cannot convert the tensors", "The tensor data is inconsistent."):
        tensors = _convert_all(gguf, spec, config, keep=dtype == "keep")
    quantization = _quantization(tensors)
    if quantization:
        config["quantization"] = quantization
        config["quantization_config"] = quantization
    if tokenizer.bos_token_id is not None:
        config["bos_token_id"] = tokenizer.bos_token_id
    if tokenizer.eos_token_ids:
        eos = tokenizer.eos_token_ids
        config["eos_token_id"] = eos[0] if len(eos) == 1 else list(eos)
    config["torch_dtype"] = _main_dtype(tensors, dtype)

    with _problem(out, "cannot write the model", "Check the directory and free disk space."):
        out.mkdir(parents=True, exist_ok=True)
        shards = [p.name for p in out.glob("model*.safetensors") if p.name != "model.safetensors"]
        if shards:
            raise GGUFImportError(
                out,
                f"output directory holds other weights ({shards[0]})",
                "Convert into an empty directory.",
            )
        _write_safetensors(out / "model.safetensors", tensors, dtype)
        (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        (out / "tokenizer.json").write_text(tokenizer.tokenizer_json)
        (out / "tokenizer_config.json").write_text(json.dumps(tokenizer.config, indent=2) + "\n")

    types = Counter(t.type_name for t in gguf.tensors)
    kept = sum(1 for t in tensors.values() if t.quantized)
    blocky = sum(n for name, n in types.items() if name not in ("F32", "F16", "BF16"))
    return ImportSummary(
        source=src,
        output=out,
        architecture=spec.name,
        model_type=spec.model_type,
        dtype=dtype,
        tensor_types=MappingProxyType(dict(sorted(types.items()))),
        kept_quantized=kept,
        dequantized=blocky - kept,
        output_bytes=sum((out / name).stat().st_size for name in OUTPUT_FILES),
        seconds=time.perf_counter() - started,
    )


@contextmanager
def _problem(path: Path, problem: str, fix: str) -> Iterator[None]:
    """Turn an unexpected failure inside the block into a one-line GGUFImportError."""
    try:
        yield
    except GGUFImportError:
        raise
    except Exception as exc:  # numpy, tokenizers and mlx raise assorted types
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise GGUFImportError(path, f"{problem}: {detail}", fix) from None


def _convert_all(
    gguf: GGUFFile, spec: ArchSpec, config: Mapping[str, Any], *, keep: bool
) -> dict[str, MLXTensor]:
    result: dict[str, MLXTensor] = {}
    for info in gguf.tensors:
        found = spec.rule_for(info.name)
        if found is None:
            raise GGUFImportError(
                gguf.path,
                f"unexpected tensor {info.name!r} for architecture {spec.name!r}",
                "This variant of the architecture is not supported by the importer.",
            )
        rule, mlx_name = found
        tensor = convert_tensor(gguf, info, keep_quantized=keep and rule.matrix)
        result[mlx_name] = _transform(gguf, info, tensor, rule.transform, config)
    return result


def _transform(
    gguf: GGUFFile, info: TensorInfo, tensor: MLXTensor, transform: str, config: Mapping[str, Any]
) -> MLXTensor:
    try:
        if transform == UNPERMUTE_Q:
            return unpermute_rows(tensor, int(config["num_attention_heads"]))
        if transform == UNPERMUTE_K:
            return unpermute_rows(tensor, int(config["num_key_value_heads"]))
    except ValueError as exc:
        raise GGUFImportError(
            gguf.path,
            f"tensor {info.name!r}: {exc}",
            "Head counts in the metadata do not match the tensor shapes.",
        ) from None
    if transform == NORM_MINUS_ONE:
        return MLXTensor(weight=tensor.weight.astype(np.float32) - 1.0, dtype=tensor.dtype)
    return tensor


def _quantization(tensors: Mapping[str, MLXTensor]) -> dict[str, Any]:
    """Top-level bits = the most common width; other quantized layers get an override."""
    bits = {name.removesuffix(".weight"): t.bits for name, t in tensors.items() if t.bits}
    if not bits:
        return {}
    default = Counter(bits.values()).most_common(1)[0][0]
    config: dict[str, Any] = {"group_size": GROUP_SIZE, "bits": default, "mode": "affine"}
    for module, width in sorted(bits.items()):
        if width != default:
            config[module] = {"group_size": GROUP_SIZE, "bits": width, "mode": "affine"}
    return config


def _main_dtype(tensors: Mapping[str, MLXTensor], dtype: str) -> str:
    if dtype != "keep":
        return dtype
    sizes: Counter[str] = Counter()
    for t in tensors.values():
        sizes[t.dtype] += t.weight.size
    return sizes.most_common(1)[0][0]


def _write_safetensors(path: Path, tensors: Mapping[str, MLXTensor], dtype: str) -> None:
    import mlx.core as mx

    arrays: dict[str, Any] = {}
    for name, t in tensors.items():
        target = getattr(mx, t.dtype if dtype == "keep" else dtype)
        if t.quantized and t.scales is not None and t.biases is not None:
            base = name.removesuffix(".weight")
            arrays[name] = mx.array(t.weight)
            arrays[f"{base}.scales"] = mx.array(t.scales).astype(target)
            arrays[f"{base}.biases"] = mx.array(t.biases).astype(target)
        else:
            arrays[name] = mx.array(t.weight).astype(target)
    tmp = path.with_name(".partial-" + path.name)  # not matched by mlx-lm's model*.safetensors
    mx.save_safetensors(str(tmp), arrays, metadata={"format": "mlx"})
    tmp.replace(path)
