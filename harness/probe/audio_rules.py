"""mlx-audio: which kind of audio model (tts, stt, sts ...) a model type is, without mlx.

mlx-audio ships ``registry.py``, an import-free classifier over its ``<kind>/models`` folders
and ``<kind>/utils.py`` remapping tables. The probe runs that file on its own (not its package,
whose ``__init__`` may import more) when it imports only the standard library, so the rules
follow the installed version; otherwise it reads the same folders and tables itself.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

from harness.probe.source import (
    SourceError,
    distribution_version,
    literal_or,
    model_modules,
    package_dir,
    parse,
    stdlib_only,
)

AUDIO_KINDS = ("tts", "stt", "sts")
AMBIGUOUS = frozenset({"llama", "qwen3", "dense"})  # LLM backbones mlx-audio also ships


def _frozen(mapping: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class AudioRules:
    """The installed mlx-audio's model folders, remapping tables and classifier."""

    version: str | None = None
    families: Mapping[str, frozenset[str]] = field(default_factory=lambda: _frozen({}))
    remapping: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: _frozen({}))
    classify_model: Callable[[str, str], str | None] | None = None

    @property
    def installed(self) -> bool:
        return self.version is not None

    def classify(self, model_type: str | None, name: str = "") -> tuple[str, str] | None:
        """(kind, module) for an audio model (kind: tts, stt, sts ...), None for other models.

        ``name`` (the repository name) is a hint mlx-audio also uses, for configs without a
        ``model_type`` (Kokoro's original config has none).
        """
        mtype = (model_type or "").strip().lower()
        kind = self._kind(mtype, name)
        if kind is None:
            return None
        families = self.families.get(kind, frozenset())
        module = self.remapping.get(kind, {}).get(mtype, mtype)
        if module not in families:
            module = next((p for p in _segments(name) if p in families), module)
        return kind, module

    def _kind(self, mtype: str, name: str) -> str | None:
        if self.classify_model is not None:
            try:
                return self.classify_model(mtype, name)
            except Exception:  # installed code: on any failure, read the tables ourselves
                pass
        for kind in AUDIO_KINDS:
            if mtype and mtype in self.remapping.get(kind, {}):
                return kind
        hits = [k for k in AUDIO_KINDS if mtype in self.families.get(k, set()) - AMBIGUOUS]
        if len(hits) == 1:
            return hits[0]
        segments = _segments(name)
        return next(
            (k for k in AUDIO_KINDS if any(s in self.families.get(k, set()) for s in segments)),
            None,
        )


def _segments(name: str) -> list[str]:
    lowered = name.lower()
    for sep in "/\\-_. ":
        lowered = lowered.replace(sep, " ")
    return [s for s in lowered.split() if s not in AMBIGUOUS]


def detect_audio() -> AudioRules:
    root = package_dir("mlx_audio")
    version = distribution_version("mlx-audio")
    if root is None or version is None:
        return AudioRules()
    families = {kind: model_modules(root / kind / "models") for kind in AUDIO_KINDS}
    remapping = {}
    for kind in AUDIO_KINDS:
        table = literal_or(root / kind / "utils.py", "MODEL_REMAPPING", {})
        remapping[kind] = _frozen({str(k).lower(): str(v).lower() for k, v in table.items()})
    registry = _load_standalone(root / "registry.py", "_harness_probe_mlx_audio_registry")
    classify = getattr(registry, "classify_model", None) if registry else None
    return AudioRules(version, _frozen(families), _frozen(remapping), classify)


def _load_standalone(path: Path, name: str) -> ModuleType | None:
    """Run one module file that imports only the standard library; None if it cannot."""
    if not path.is_file():
        return None
    try:
        if not stdlib_only(parse(path)):
            return None
    except SourceError:
        return None
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception:  # installed code: if it does not run on its own, do without it
        return None
    return module
