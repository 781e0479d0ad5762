"""Model identity from files only (no mlx import): config, chat template, weights, revision."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness.backends.base import weights_bytes
from harness.types import ModelIdentity, ModelRef


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def chat_template(path: Path) -> str | None:
    """The chat template as mlx-lm / transformers would find it, or None."""
    for name in ("chat_template.jinja",):
        if (path / name).is_file():
            return (path / name).read_text()
    if (path / "chat_template.json").is_file():
        try:
            value = json.loads((path / "chat_template.json").read_text()).get("chat_template")
            if isinstance(value, str):
                return value
        except ValueError:
            pass
    try:
        config = json.loads((path / "tokenizer_config.json").read_text())
    except (OSError, ValueError):
        return None
    value = config.get("chat_template")
    if isinstance(value, list):  # named templates: the default one counts
        named = {t.get("name"): t.get("template") for t in value if isinstance(t, dict)}
        value = named.get("default")
    return value if isinstance(value, str) else None


def model_identity(ref: ModelRef) -> ModelIdentity:
    if ref.path is None:
        return ModelIdentity(ref.key, None, ref.backend)
    path = Path(ref.path)
    config = path / "config.json"
    template = chat_template(path)
    revision = path.name if path.parent.name == "snapshots" else None
    return ModelIdentity(
        key=ref.key,
        path=str(path),
        backend=ref.backend,
        revision=revision,
        config_sha256=_sha256(config.read_bytes()) if config.is_file() else None,
        chat_template_sha256=_sha256(template.encode()) if template else None,
        weights_bytes=weights_bytes(path),
    )
