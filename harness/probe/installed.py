"""What the installed backends can load, read from their files without importing them.

``detect_stack()`` looks at the installed mlx-lm, mlx-vlm and mlx-audio: versions (package
metadata), model modules (directory listings), remapping tables and small pure functions (from
their source, see :mod:`.source`). Build one :class:`Stack` per process and pass it to
``probe_model`` for many models; tests build stacks with a backend missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.probe.audio_rules import AudioRules, detect_audio
from harness.probe.source import (
    SourceError,
    class_literal,
    distribution_version,
    functions,
    literal_or,
    model_modules,
    package_dir,
    parse,
)
from harness.probe.toolrules import ToolRules, builtin_rules, installed_rules

DEFAULT_KV_STEP = 256  # mlx_lm.models.cache.KVCache.step in mlx-lm 0.32.2


def frozen(mapping: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class LmRules:
    """mlx-lm: model modules and the remapping ``mlx_lm.utils._get_classes`` applies."""

    version: str | None = None
    root: Path | None = None
    model_types: frozenset[str] = frozenset()
    remapping: Mapping[str, str] = field(default_factory=lambda: frozen({}))
    arch_remapping: Mapping[tuple[str, str], str] = field(default_factory=lambda: frozen({}))
    kv_step: int = DEFAULT_KV_STEP
    tools: ToolRules = field(default_factory=builtin_rules)
    tool_parsers: frozenset[str] = frozenset()  # modules in mlx_lm/tool_parsers

    @property
    def installed(self) -> bool:
        return self.version is not None

    def module_for(self, model_type: str | None, architectures: tuple[str, ...]) -> str | None:
        if not model_type:
            return None
        for arch in architectures:
            remapped = self.arch_remapping.get((model_type, arch))
            if remapped is not None:
                return remapped if remapped in self.model_types else None
        name = self.remapping.get(model_type, model_type)
        return name if name in self.model_types else None

    def tokenizer_defaults(self, module: str | None) -> Mapping[str, Any]:
        """``TOKENIZER_DEFAULTS`` of a model module (e.g. a default tool parser), else {}."""
        if module is None or self.root is None:
            return {}
        path = self.root / "models" / f"{module}.py"
        value = literal_or(path, "TOKENIZER_DEFAULTS", {}) if path.is_file() else {}
        return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class VlmRules:
    """mlx-vlm: model packages, which of them have a vision tower, its embedding loader."""

    version: str | None = None
    model_types: frozenset[str] = frozenset()
    vision_types: frozenset[str] = frozenset()
    embedding_remapping: Mapping[str, str] = field(default_factory=lambda: frozen({}))
    model_type_of: Callable[[Mapping[str, Any]], str | None] | None = None

    @property
    def installed(self) -> bool:
        return self.version is not None

    def normalized(self, config: Mapping[str, Any]) -> str | None:
        if self.model_type_of is not None:
            try:
                value = self.model_type_of(dict(config))
            except Exception:  # installed code on arbitrary config: any failure = unknown
                return None
            return str(value) if value else None
        raw = config.get("model_type")
        return str(raw).lower() if raw else None

    def module_for(self, config: Mapping[str, Any]) -> str | None:
        name = self.normalized(config)
        return name if name in self.model_types else None

    def embedding_module_for(self, config: Mapping[str, Any]) -> str | None:
        raw = str(config.get("model_type") or "").lower()
        if not raw:
            return None
        return self.module_for({**config, "model_type": self.embedding_remapping.get(raw, raw)})


@dataclass(frozen=True)
class Stack:
    """The installed backends, as the probe sees them."""

    lm: LmRules = field(default_factory=LmRules)
    vlm: VlmRules = field(default_factory=VlmRules)
    audio: AudioRules = field(default_factory=AudioRules)


def detect_lm() -> LmRules:
    root = package_dir("mlx_lm")
    version = distribution_version("mlx-lm")
    if root is None or version is None:
        return LmRules()
    utils = root / "utils.py"
    try:
        step = int(class_literal(parse(root / "models" / "cache.py"), "KVCache", "step"))
    except (SourceError, TypeError, ValueError):
        step = DEFAULT_KV_STEP
    return LmRules(
        version=version,
        root=root,
        model_types=model_modules(root / "models"),
        remapping=frozen(literal_or(utils, "MODEL_REMAPPING", {})),
        arch_remapping=frozen(literal_or(utils, "MODEL_ARCHITECTURE_REMAPPING", {})),
        kv_step=step,
        tools=installed_rules(root),
        tool_parsers=model_modules(root / "tool_parsers"),
    )


def detect_vlm() -> VlmRules:
    root = package_dir("mlx_vlm")
    version = distribution_version("mlx-vlm")
    if root is None or version is None:
        return VlmRules()
    models = root / "models"
    types = model_modules(models)
    try:
        model_type_of = functions(
            parse(root / "utils.py"), ("get_model_type",), origin=str(root / "utils.py")
        )["get_model_type"]
    except SourceError:
        model_type_of = None
    return VlmRules(
        version=version,
        model_types=types,
        vision_types=frozenset(t for t in types if _has_vision(models / t)),
        embedding_remapping=frozen(
            literal_or(root / "embedding_loader.py", "EMBEDDING_MODEL_REMAPPING", {})
        ),
        model_type_of=model_type_of,
    )


def _has_vision(package: Path) -> bool:
    """A vision tower: a ``vision.py`` module or a ``VisionConfig`` in the package's code."""
    if not package.is_dir():
        return False
    if (package / "vision.py").is_file():
        return True
    for file in package.glob("*.py"):
        try:
            if "VisionConfig" in file.read_text(encoding="utf-8", errors="replace"):
                return True
        except OSError:
            continue
    return False


def detect_stack() -> Stack:
    """Read the installed backends (tens of milliseconds; no mlx import)."""
    return Stack(detect_lm(), detect_vlm(), detect_audio())
