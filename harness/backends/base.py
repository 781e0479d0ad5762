"""The contract between scenarios and backends: load a model, tokenize, stream tokens."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from harness.probe.types import Probe
    from harness.toolcalls.model import Extraction


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


class PromptCaching(Protocol):
    """Optional: backends whose models expose their KV/state cache (mlx-lm does)."""

    def make_cache(self, *, max_kv_size: int | None = None) -> Any: ...

    def prefill(self, cache: Any, tokens: Sequence[int]) -> None:
        """Process ``tokens`` into ``cache`` without sampling anything."""
        ...

    def generate_cached(
        self,
        cache: Any,
        tokens: Sequence[int],
        *,
        max_tokens: int,
        kv_bits: int | None = None,
        kv_group_size: int = 64,
    ) -> Iterator[int]:
        """Greedy tokens for ``tokens`` appended to what ``cache`` already holds."""
        ...

    def cache_types(self, cache: Any) -> list[str]: ...

    def cache_offset(self, cache: Any) -> int: ...

    def cache_nbytes(self, cache: Any) -> int: ...

    def untrimmable(self, cache: Any) -> str | None:
        """None when the cache can be trimmed, else why not (one line)."""
        ...

    def trim(self, cache: Any, n: int) -> int: ...

    def copy_cache(self, cache: Any) -> Any: ...

    def save_cache(self, cache: Any, path: Path) -> None: ...

    def load_cache(self, path: Path) -> Any: ...


class ToolCalling(Protocol):
    """Optional: models whose backend infers a tool-call parser and can replay what its
    server returns for generated tokens (mlx-lm does)."""

    def tool_parser_name(self) -> str | None:
        """The parser the backend inferred for this model (e.g. ``json_tools``), or None."""
        ...

    def tool_markers(self) -> tuple[str, ...]:
        """The start and end markers of a call, as the inferred parser defines them."""
        ...

    def chat_template_text(self) -> str | None: ...

    def with_chat_template(self, template: str) -> Any:
        """The same weights with a tokenizer loaded as the backend's server loads it for
        ``--chat-template TEMPLATE`` (so the parser is inferred again, from ``template``)."""
        ...

    def replay_server(
        self,
        prompt: Sequence[int],
        generated: Sequence[int],
        tools: Sequence[Mapping[str, Any]] | None,
        finish_reason: Literal["stop", "length"],
    ) -> tuple[Extraction, Extraction]:
        """(non-streamed, streamed): what a client gets for ``generated`` (EOS excluded)."""
        ...


class Probing(Protocol):
    """Optional on a backend the probe does not know (the fake, plug-ins): read a model's own
    files, without loading it, for the probe-and-policy step (``harness.runner.preflight``);
    raise ``harness.probe.ProbeError`` when the path is not such a model."""

    def probe(self, path: Path) -> Probe: ...


class Backend(Protocol):
    name: str

    def load(self, path: Path) -> tuple[LoadedModel, LoadInfo]: ...


def weights_bytes(path: Path) -> int:
    """Bytes of weight files only (safetensors, npz, gguf), not the whole folder."""
    suffixes = (".safetensors", ".npz", ".gguf", ".bin")
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and p.suffix in suffixes)
