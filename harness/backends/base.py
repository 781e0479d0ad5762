"""The contract between scenarios and backends: load a model, tokenize, stream tokens."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


class BackendError(Exception):
    """A backend could not do what was asked; the message is one line."""


@dataclass(frozen=True)
class LoadInfo:
    load_s: float
    weights_bytes: int
    device: str
    details: Mapping[str, Any] = field(default_factory=dict)


class LoadedModel(Protocol):
    """A model held in memory by a backend, ready for scenarios."""

    @property
    def eos_token_ids(self) -> frozenset[int]: ...

    def encode(self, text: str) -> list[int]: ...

    def decode(self, tokens: Sequence[int]) -> str: ...

    def chat_tokens(
        self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Any] | None = None
    ) -> list[int]: ...

    def stream_tokens(
        self,
        prompt: Sequence[int],
        *,
        max_tokens: int,
        ignore_eos: bool = True,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Iterator[int]:
        """Yield generated token ids as the backend produces them (first one after prefill)."""
        ...

    def vocab_size(self) -> int: ...


class Backend(Protocol):
    name: str

    def load(self, path: Path) -> tuple[LoadedModel, LoadInfo]: ...


def weights_bytes(path: Path) -> int:
    """Bytes of weight files only (safetensors, npz, gguf), not the whole folder."""
    suffixes = (".safetensors", ".npz", ".gguf", ".bin")
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and p.suffix in suffixes)
