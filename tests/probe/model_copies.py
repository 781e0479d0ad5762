"""The embedded models as test parameters, and doctored copies of model folders.

A doctored copy links every file of the original (weights are never copied) except the ones
it replaces (config.json edited) or drops (tokenizer files), so a rule can be shown to fire on
a real checkpoint with one field or file changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.models.catalog import EmbeddedModel, embedded_models

EMBEDDED: tuple[EmbeddedModel, ...] = tuple(embedded_models())
EMBEDDED_IDS = [m.name for m in EMBEDDED]
ConfigEdit = Callable[[dict[str, Any]], None]


def prepared(model: EmbeddedModel) -> Path:
    """The model's folder; skips the test (with the fix) when it is not prepared."""
    if not model.prepared:
        pytest.skip(
            f"embedded model {model.name} is not prepared in {model.path.parent}; "
            f"run `mlx-harness models prepare {model.name}`"
        )
    return model.path


def embedded(name: str) -> Path:
    """The folder of the embedded model ``name`` (skips when it is not prepared)."""
    return prepared(next(m for m in EMBEDDED if m.name == name))


def doctored_copy(
    source: Path,
    target: Path,
    *,
    edit: ConfigEdit | None = None,
    set_fields: Mapping[str, Any] | None = None,
    drop: Iterable[str] = (),
) -> Path:
    """``source`` linked file by file into ``target``, config.json edited, ``drop`` left out."""
    target.mkdir(parents=True)
    dropped = set(drop)
    for item in source.iterdir():
        if item.name in dropped or item.name == "config.json":
            continue
        (target / item.name).symlink_to(item.resolve())
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    for dotted, value in (set_fields or {}).items():
        scope = config
        *parents, leaf = dotted.split(".")
        for key in parents:
            scope = scope[key]
        if value is None:
            scope.pop(leaf, None)
        else:
            scope[leaf] = value
    if edit is not None:
        edit(config)
    (target / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    return target
