"""Generation through a KV cache stored at a chosen precision (mlx-lm's QuantizedKVCache), with
the next-token log-probabilities, the token times and what the cache holds: what the
``kv_sweep`` scenario compares against the same model's unquantized cache."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from harness.backends.base import BackendError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class KVUnsupported(BackendError):
    """The backend cannot store this model's cache as asked (a sliding-window layer mlx-lm
    cannot quantize, a head dimension the group size does not divide); one line."""


@dataclass(frozen=True)
class KVSetting:
    """How the cache stores keys and values: ``bits`` None is the model's own dtype; otherwise
    groups of ``group_size`` quantized to ``bits``, from the time the cache holds
    ``quantized_start`` tokens (mlx-lm's ``kv_bits``, ``kv_group_size``, ``quantized_kv_start``)."""

    bits: int | None
    group_size: int = 64
    quantized_start: int = 0

    @property
    def label(self) -> str:
        return "none" if self.bits is None else f"{self.bits}-bit"


@dataclass(frozen=True)
class KVRun:
    """One generation: ``tokens`` (the forced ones when forced), ``logprobs`` (row ``i``: the
    distribution the token at ``i`` was chosen from, natural log, float32), the time of each
    token since the call (s, the first one after prefill), the bytes the cache holds for the
    prompt's tokens (logical: the tokens held, not the buffer grown in steps), the bytes of its
    buffers after the run, MLX's peak memory over the run (bytes, None when unknown) and the
    cache's layer types."""

    tokens: tuple[int, ...]
    logprobs: NDArray[np.float32]
    token_times_s: tuple[float, ...]
    kv_bytes: int
    allocated_bytes: int
    peak_bytes: int | None
    cache_types: tuple[str, ...]


@runtime_checkable
class KVQuantizedRuns(Protocol):
    """Optional on a text model (mlx-lm's has it): greedy generation through a fresh cache
    stored as ``kv`` says, EOS ignored, or, with ``forced``, the tokens given fed back instead
    of the greedy ones (teacher forcing: the distributions at the reference's positions);
    :class:`KVUnsupported` when the cache cannot be stored so."""

    def kv_run(
        self,
        prompt: Sequence[int],
        *,
        max_tokens: int,
        kv: KVSetting,
        forced: Sequence[int] | None = None,
    ) -> KVRun: ...
