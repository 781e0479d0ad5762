"""Which files hold a model's weights, and what their headers say.

Only the files the loader would read count (a known gap elsewhere is summing every file in the
folder): the shards named by ``*.safetensors.index.json`` when present, else the top-level
``*.safetensors`` without Mistral's duplicate ``consolidated.safetensors``, plus the
sentence-transformers module folders (``2_Dense/model.safetensors``) that mlx-vlm's embedding
loader also reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.probe.files import ProbeFileError, TensorHeader, load_json, safetensors_header
from harness.probe.types import WeightFormat

PYTORCH_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt")


@dataclass(frozen=True)
class Weights:
    format: WeightFormat
    files: tuple[Path, ...]
    tensors: tuple[TensorHeader, ...] = ()
    problems: tuple[str, ...] = ()


def find_weights(path: Path, *, submodules: bool = False) -> Weights:
    """The weight files of a model directory and their tensor headers (never the data)."""
    try:
        files = _safetensors_files(path, submodules=submodules)
    except ProbeFileError as exc:
        return Weights(WeightFormat.SAFETENSORS, (), (), (str(exc),))
    if files:
        return _read(files)
    ggufs = gguf_files(path)
    if ggufs:
        return Weights(WeightFormat.GGUF, ggufs)
    torch = tuple(sorted(p for p in path.iterdir() if p.suffix in PYTORCH_SUFFIXES))
    if any(p.name.startswith(("pytorch_model", "model")) for p in torch):
        return Weights(WeightFormat.PYTORCH, torch)
    return Weights(WeightFormat.NONE, ())


def gguf_files(path: Path) -> tuple[Path, ...]:
    """The model GGUF(s) of a directory, projector files (``mmproj*``) left out."""
    return tuple(
        sorted(p for p in path.glob("*.gguf") if p.is_file() and "mmproj" not in p.name.lower())
    )


def _safetensors_files(path: Path, *, submodules: bool) -> tuple[Path, ...]:
    indexes = sorted(path.glob("*.safetensors.index.json"))
    if indexes:
        index = load_json(indexes[0])
        weight_map = index.get("weight_map") if isinstance(index, dict) else None
        if not isinstance(weight_map, dict):
            raise ProbeFileError(f"{indexes[0].name}: no weight_map")
        names = sorted(set(map(str, weight_map.values())))
        missing = [n for n in names if not (path / n).is_file()]
        if missing:
            raise ProbeFileError(
                f"{indexes[0].name}: {len(missing)} shard(s) missing, e.g. {missing[0]}"
            )
        files = [path / n for n in names]
    else:
        files = sorted(p for p in path.glob("*.safetensors") if p.is_file())
        if any(not p.name.startswith("consolidated") for p in files):
            files = [p for p in files if not p.name.startswith("consolidated")]
    if submodules:
        files += sorted(p for p in path.glob("*/*.safetensors") if p.is_file())
    return tuple(files)


def _read(files: tuple[Path, ...]) -> Weights:
    tensors: list[TensorHeader] = []
    problems: list[str] = []
    for file in files:
        try:
            top = file.parent == files[0].parent
            prefix, where = (
                ("", file.name)
                if top
                else (f"{file.parent.name}.", f"{file.parent.name}/{file.name}")
            )
            tensors.extend(
                TensorHeader(prefix + t.name, t.dtype, t.shape, t.nbytes, where)
                for t in safetensors_header(file)
            )
        except ProbeFileError as exc:
            problems.append(str(exc))
    return Weights(WeightFormat.SAFETENSORS, files, tuple(tensors), tuple(problems))


FLOAT_WIDTH = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}


def compute_dtype(tensors: tuple[TensorHeader, ...]) -> str | None:
    """The float dtype activations (and the KV cache) will have under MLX's type promotion.

    Hidden states pass through every norm, so a float32 norm weight next to float16 weights
    (as GGUF imports keep them) makes the activations float32. Quantization scales and biases
    do not count; without norms, the dominant float dtype wins.
    """
    floats = [
        t for t in tensors if t.dtype in FLOAT_WIDTH and not t.name.endswith((".scales", ".biases"))
    ]
    if not floats:
        return None
    by_bytes: dict[str, int] = {}
    for t in floats:
        by_bytes[t.dtype] = by_bytes.get(t.dtype, 0) + t.nbytes
    dominant = max(by_bytes, key=lambda k: by_bytes[k])
    norms = {t.dtype for t in floats if "norm" in t.name.lower()}
    return max([dominant, *sorted(norms)], key=lambda d: FLOAT_WIDTH[d])


def dominant_dtype(dtype_bytes: dict[str, int] | None) -> str | None:
    """The floating dtype holding the most bytes (names as in safetensors: BF16, F32 ...)."""
    floats = {k: v for k, v in (dtype_bytes or {}).items() if k.startswith(("F", "BF"))}
    return max(floats, key=lambda k: floats[k]) if floats else None
