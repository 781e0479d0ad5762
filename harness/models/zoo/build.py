"""Generate a zoo model directory: random weights (seeded), real tokenizer, family template.

``build`` dispatches on ``Family.backend``: mlx-lm model classes for text, mlx-vlm's for vision,
mlx-audio's for audio. Each writes into a temporary sibling directory that replaces ``out_dir``
only when complete, so a reader never sees half a model.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from pathlib import Path

from harness.models.zoo.common import BuiltModel
from harness.models.zoo.families import FAMILIES, Family

MARKER = "harness-model.json"
ZOO_VERSION = 2


def build(family: Family, out_dir: Path, *, seed: int = 0) -> Path:
    """Write ``family`` as a model directory for its backend at ``out_dir`` (atomically)."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.parent / f".{out_dir.name}-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()  # mode from the umask, unlike mkdtemp's 0700
    try:
        built = _write_model(family, tmp, seed=seed)
        marker: dict[str, object] = {**_marker(family, seed), "parameters": built.parameters}
        if built.content is not None:
            marker["content"] = dict(built.content)
        (tmp / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        tmp.rename(out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return out_dir


def is_current(out_dir: Path, family: Family, *, seed: int = 0) -> bool:
    """True when ``out_dir`` holds this family, as now defined, built by this zoo version/seed."""
    marker = Path(out_dir) / MARKER
    if not marker.is_file():
        return False
    try:
        data = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict):
        return False
    data.pop("parameters", None)
    data.pop("content", None)
    return bool(data == _marker(family, seed))


def family_names() -> list[str]:
    """Names of all zoo families, in table order."""
    return list(FAMILIES)


def _marker(family: Family, seed: int) -> dict[str, object]:
    digest = hashlib.sha256(
        json.dumps(family.fingerprint(), sort_keys=True).encode("utf-8")
    ).hexdigest()
    return {
        "source": f"zoo/{family.name}",
        "zoo_version": ZOO_VERSION,
        "seed": seed,
        "backend": family.backend,
        "family_sha256": digest,
    }


def _write_model(family: Family, out_dir: Path, *, seed: int) -> BuiltModel:
    if family.backend == "mlx_lm":
        from harness.models.zoo.build_text import write_text_model

        return write_text_model(family, out_dir, seed=seed)
    if family.backend == "mlx_vlm":
        from harness.models.zoo.build_vision import write_vision_model

        return BuiltModel(write_vision_model(family, out_dir, seed=seed))
    if family.backend == "mlx_audio":
        from harness.models.zoo.build_audio import write_audio_model

        return BuiltModel(write_audio_model(family, out_dir, seed=seed))
    raise ValueError(f"{family.name}: unknown backend {family.backend!r}")
