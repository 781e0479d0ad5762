"""Model identity from files only (no mlx import): config, chat template, weights, revision."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.backends.base import weights_bytes
from harness.core.types import ModelIdentity, ModelRef
from harness.runner.messages import LoadRequest


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


@dataclass(frozen=True)
class ServedIdentity:
    """What a server said of itself at load: engine and version (or URL), and its model list."""

    server: str
    models: tuple[str, ...]


def served_identity(details: object) -> ServedIdentity | None:
    """From a served model's load details (``server``, ``server_models``); None otherwise."""
    if not isinstance(details, Mapping) or not isinstance(details.get("server"), str):
        return None
    models = details.get("server_models")
    listed = tuple(str(m) for m in models) if isinstance(models, list) else ()
    return ServedIdentity(str(details["server"]), listed)


def load_request(ref: ModelRef, log_dir: Path) -> LoadRequest:
    """The worker's ``load`` request for ``ref`` (a served model carries its server)."""
    if ref.server is None:
        return LoadRequest(ref.backend, ref.path)
    return LoadRequest(ref.backend, ref.path, ref.server, str(log_dir))


def model_identity(ref: ModelRef, served: ServedIdentity | None = None) -> ModelIdentity:
    identity = _files_identity(ref)
    if served is None:
        return identity
    return dataclasses.replace(identity, server=served.server, server_models=served.models)


def _files_identity(ref: ModelRef) -> ModelIdentity:
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
