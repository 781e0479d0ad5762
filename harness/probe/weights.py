"""Which files hold a model's weights, and what their headers say.

Only the files the loader would read count (a known gap elsewhere is summing every file in the
folder): the shards named by ``*.safetensors.index.json`` when present, else the top-level
``*.safetensors`` without Mistral's duplicate ``consolidated.safetensors``, plus the
sentence-transformers module folders (``2_Dense/model.safetensors``) that mlx-vlm's embedding
loader also reads.
"""

from __future__ import annotations

from collections.abc import Set
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


def find_weights(path: Path, names: Set[str]) -> Weights:
    """The top-level weight files of a model directory (``names``: its file names) and their
    tensor headers (never the data)."""
    try:
        files = _safetensors_files(path, names)
    except ProbeFileError as exc:
        return Weights(WeightFormat.SAFETENSORS, (), (), (str(exc),))
    if files:
        return _read(files)
    ggufs = gguf_files(path, names)
    if ggufs:
        return Weights(WeightFormat.GGUF, ggufs)
    torch = tuple(sorted(path / n for n in names if Path(n).suffix in PYTORCH_SUFFIXES))
    if any(p.name.startswith(("pytorch_model", "model")) for p in torch):
        return Weights(WeightFormat.PYTORCH, torch)
    return Weights(WeightFormat.NONE, ())


def find_module_weights(path: Path, folders: Set[str]) -> Weights:
    """The sentence-transformers module weights (``2_Dense/model.safetensors``) in ``folders``;
    tensor names get the folder as a prefix (``2_Dense.linear.weight``)."""
    files = sorted(p for f in folders for p in (path / f).glob("*.safetensors") if p.is_file())
    if not files:
        return Weights(WeightFormat.NONE, ())
    return _read(tuple(files), top=path)


def with_modules(top: Weights, modules: Weights) -> Weights:
    """The weights an embedding loader reads: the top-level safetensors plus the modules'."""
    if not modules.files or (top.format is WeightFormat.SAFETENSORS and not top.files):
        return top  # no modules, or a broken index (its problem is the finding)
    if top.format is not WeightFormat.SAFETENSORS:
        return modules
    return Weights(
        WeightFormat.SAFETENSORS,
        top.files + modules.files,
        top.tensors + modules.tensors,
        top.problems + modules.problems,
    )


def gguf_files(path: Path, names: Set[str]) -> tuple[Path, ...]:
    """The model GGUF(s) among a directory's file ``names``, projectors (``mmproj*``) left out."""
    return tuple(
        sorted(path / n for n in names if n.endswith(".gguf") and "mmproj" not in n.lower())
    )


def _safetensors_files(path: Path, names: Set[str]) -> tuple[Path, ...]:
    indexes = sorted(n for n in names if n.endswith(".safetensors.index.json"))
    if indexes:
        index = load_json(path / indexes[0])
        weight_map = index.get("weight_map") if isinstance(index, dict) else None
        if not isinstance(weight_map, dict):
            raise ProbeFileError(f"{indexes[0]}: no weight_map")
        shards = sorted(set(map(str, weight_map.values())))
        missing = [n for n in shards if n not in names and not (path / n).is_file()]
        if missing:
            raise ProbeFileError(
                f"{indexes[0]}: {len(missing)} shard(s) missing, e.g. {missing[0]}"
            )
        return tuple(path / n for n in shards)
    files = sorted(path / n for n in names if n.endswith(".safetensors"))
    if any(not p.name.startswith("consolidated") for p in files):
        files = [p for p in files if not p.name.startswith("consolidated")]
    return tuple(files)


def _read(files: tuple[Path, ...], top: Path | None = None) -> Weights:
    """Headers of ``files``; those below ``top`` get their folder as a name prefix."""
    tensors: list[TensorHeader] = []
    problems: list[str] = []
    for file in files:
        try:
            nested = top is not None and file.parent != top
            prefix = f"{file.parent.name}." if nested else ""
            where = f"{file.parent.name}/{file.name}" if nested else file.name
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
