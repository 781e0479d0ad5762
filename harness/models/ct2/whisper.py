"""Convert a CTranslate2 Whisper directory into a Hugging Face-layout one that mlx-audio loads.

Input: ``model.bin`` (any CTranslate2 ``WhisperSpec``, float32/float16/bfloat16/int8/int16),
``config.json`` and ``tokenizer.json`` (``vocabulary.txt`` is cross-checked when present).
Output: ``config.json``, ``generation_config.json``, ``preprocessor_config.json``,
``tokenizer.json``, ``tokenizer_config.json`` and a float32 ``model.safetensors``.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.models import whisper_layout
from harness.models.ct2 import whisper_files as files
from harness.models.ct2.errors import CT2FormatError
from harness.models.ct2.model_bin import read_model_bin
from harness.models.ct2.whisper_weights import WhisperDims, whisper_weights

CONVERTER_VERSION = 1
OUTPUT_FILES = (
    "config.json",
    "generation_config.json",
    "preprocessor_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "model.safetensors",
)


@dataclass(frozen=True)
class ConversionSummary:
    """What a conversion read and wrote."""

    source: str
    spec: str
    spec_revision: int
    binary_version: int
    source_dtypes: tuple[tuple[str, int], ...]  # (dtype, number of tensors), most common first
    dims: WhisperDims
    parameters: int
    appended_timestamp_tokens: int
    output_bytes: int
    seconds: float
    converter_version: int = CONVERTER_VERSION

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["source_dtypes"] = dict(self.source_dtypes)
        return data


def convert_whisper_ct2(src_dir: Path, out_dir: Path) -> ConversionSummary:
    """Convert the CTranslate2 Whisper in ``src_dir`` into ``out_dir`` (created if needed;
    the output files are overwritten). Bad input raises a one-line CT2FormatError."""
    start = time.perf_counter()
    src_dir, out_dir = Path(src_dir), Path(out_dir)
    if not src_dir.is_dir():
        raise CT2FormatError(src_dir, "not a directory", "Pass the CTranslate2 model directory")
    bin_path = src_dir / "model.bin"
    if not bin_path.is_file():
        raise CT2FormatError(bin_path, "missing", "Pass a CTranslate2 model directory")
    model = read_model_bin(bin_path)
    weights, dims = whisper_weights(model)
    ct2_config = files.read_ct2_config(src_dir)
    tokenizer, appended = files.whisper_tokenizer(src_dir, dims.vocab_size)
    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out_dir / "tokenizer.json"))
    _write_json(out_dir / "config.json", files.hf_config(dims, tokenizer, ct2_config))
    _write_json(
        out_dir / "generation_config.json", files.generation_config(dims, tokenizer, ct2_config)
    )
    preprocessor = whisper_layout.preprocessor_config(dims.num_mel_bins)
    _write_json(out_dir / "preprocessor_config.json", preprocessor)
    _write_json(out_dir / "tokenizer_config.json", files.tokenizer_config())
    _save_safetensors(out_dir / "model.safetensors", weights)
    dtypes = Counter(
        dtype for name, dtype in model.dtypes.items() if model.variables[name].ndim
    ).most_common()
    return ConversionSummary(
        source=str(bin_path),
        spec=model.spec,
        spec_revision=model.revision,
        binary_version=model.binary_version,
        source_dtypes=tuple(dtypes),
        dims=dims,
        parameters=sum(int(v.size) for v in weights.values()),
        appended_timestamp_tokens=appended,
        output_bytes=sum((out_dir / name).stat().st_size for name in OUTPUT_FILES),
        seconds=round(time.perf_counter() - start, 3),
    )


def _save_safetensors(path: Path, weights: dict[str, Any]) -> None:
    import mlx.core as mx

    arrays = {name: mx.array(value) for name, value in sorted(weights.items())}
    mx.save_safetensors(str(path), arrays, metadata={"format": "pt"})


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
