"""Bytes a decode step reads from memory, and the hardware ceiling they imply.

A loaded model that can say what it reads (:class:`ReportsTraffic`, mlx-lm's can) gives a
:class:`DecodeTraffic`: the weight bytes one decode step reads (quantization scales and biases
included; an untied embedding table counts one row, a tied one all of it, since the output
projection reads it) and, per cache layer, the bytes one cached token takes and the window a
rotating layer keeps. Bytes per token at a context of ``n`` tokens = weights + each layer's
bytes per token x min(n, window) + fixed state. ``matmul_params`` gives the compute a prompt
token takes (2 FLOPs per weight in a matrix product), for the prefill ceiling.

A ceiling is the hardware's (the device's measured memory read bandwidth, or FLOP rate:
:mod:`harness.backends.bandwidth`), so no run can pass it: a share above ``SHARE_LIMIT`` says
the ceiling is wrong, never that the run beat the hardware (:func:`share_over_limit`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

SHARE_LIMIT = 1.0  # a share of a hardware ceiling cannot pass it


@dataclass(frozen=True)
class CacheLayerTraffic:
    bytes_per_token: float  # K and V of one cached token in this layer
    window: int | None = None  # a rotating layer keeps at most this many tokens


@dataclass(frozen=True)
class DecodeTraffic:
    weight_bytes: int  # read once per decode step
    layers: tuple[CacheLayerTraffic, ...] = ()
    fixed_state_bytes: int = 0  # recurrent state read each step, whatever the context
    matmul_params: int = 0  # weights in matrix products per token (a tied output head included)

    @property
    def prefill_flops_per_token(self) -> float:
        """Matmul FLOPs one prompt token takes (2 per weight; attention scores left out)."""
        return 2.0 * self.matmul_params

    def kv_bytes(self, context_tokens: float) -> float:
        """KV cache bytes read by one decode step attending to ``context_tokens`` tokens."""
        total = 0.0
        for layer in self.layers:
            held = context_tokens if layer.window is None else min(context_tokens, layer.window)
            total += layer.bytes_per_token * held
        return total

    def bytes_per_token(self, context_tokens: float) -> float:
        return self.weight_bytes + self.fixed_state_bytes + self.kv_bytes(context_tokens)


@runtime_checkable
class ReportsTraffic(Protocol):
    """A loaded model that can say what one decode step reads."""

    def decode_traffic(self) -> DecodeTraffic: ...


def mean_decode_context(depth: int, prompt_tokens: int, generated: int) -> float:
    """The mean context a run's decode steps attend to: step ``i`` (1 .. generated-1) runs
    with ``depth + prompt + i`` tokens cached."""
    steps = max(1, generated - 1)
    return depth + prompt_tokens + (steps + 1) / 2


def ceiling_tps(rate_per_s: float, cost_per_token: float) -> float:
    """Tokens/s bound only by ``rate_per_s`` (the device's bytes/s read, or FLOP/s) at
    ``cost_per_token`` (bytes read, or FLOPs) per token; NaN when either is unknown."""
    if cost_per_token <= 0 or rate_per_s <= 0:
        return float("nan")
    return rate_per_s / cost_per_token


def share_over_limit(shares: Iterable[float]) -> float | None:
    """The largest of ``shares`` when it passes ``SHARE_LIMIT`` (the ceiling is then invalid),
    else None; NaN shares are left out."""
    over = [s for s in shares if math.isfinite(s) and s > SHARE_LIMIT]
    return max(over) if over else None
