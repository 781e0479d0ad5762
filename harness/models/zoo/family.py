"""The :class:`Family` record: everything needed to generate one tiny model of an architecture."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

LibraryName = Literal["mlx_lm", "mlx_vlm", "mlx_audio"]
BACKENDS: tuple[LibraryName, ...] = ("mlx_lm", "mlx_vlm", "mlx_audio")

# The trained BPE vocabulary of every text family (the corpus supports up to ~540 tokens).
VOCAB_SIZE = 512


def frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    """A deep read-only copy of ``mapping``: nested mappings become read-only views, lists become
    tuples (the tables hold no module-level mutable state). :func:`plain` reverses it."""
    return MappingProxyType({str(k): _freeze(v) for k, v in mapping.items()})


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return frozen(value)
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Family:
    """A tiny random-weight model of one architecture family.

    ``config`` is written to ``config.json`` as is, plus ``token_ids``: config keys whose values
    are the ids of the named tokens in the generated tokenizer (a tuple of names gives a list).
    ``special_tokens`` take the first ids; ``appended_special_tokens`` follow the trained
    vocabulary (Qwen and Whisper layout). ``files`` are further JSON files written verbatim
    (``preprocessor_config.json``, ...).

    ``expected_parser`` is the mlx-lm tool parser module the real model's template makes mlx-lm
    infer; ``expected_caches`` the cache class names generation must use. A family the backend
    cannot load or run here keeps its row, with the exact error in ``known_incompatibility``.
    """

    name: str
    backend: LibraryName
    config: Mapping[str, Any]
    chat_template: str | None
    special_tokens: tuple[str, ...]
    bos_token: str | None
    eos_token: str
    expected_parser: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    appended_special_tokens: tuple[str, ...] = field(default_factory=tuple)
    add_bos_token: bool = False
    token_ids: Mapping[str, str | tuple[str, ...]] = field(default_factory=_empty)
    files: Mapping[str, Mapping[str, Any]] = field(default_factory=_empty)
    expected_caches: tuple[str, ...] = ("KVCache",)
    known_incompatibility: str | None = None
    notes: str = ""

    @property
    def model_type(self) -> str:
        return str(self.config["model_type"])

    def fingerprint(self) -> dict[str, Any]:
        """The JSON-able content that determines the generated files (for staleness checks)."""
        return {
            "config": plain(self.config),
            "chat_template": self.chat_template,
            "special_tokens": list(self.special_tokens),
            "appended_special_tokens": list(self.appended_special_tokens),
            "bos_token": self.bos_token,
            "eos_token": self.eos_token,
            "add_bos_token": self.add_bos_token,
            "token_ids": plain(self.token_ids),
            "files": plain(self.files),
        }


def plain(value: Any) -> Any:
    """``value`` with mappings and tuples turned into dicts and lists (JSON-ready)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
