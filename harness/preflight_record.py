"""Reading a case's ``preflight`` record: the policy's warning, and predicted against measured
MLX peak memory.

The prediction is the probe's memory estimate kept in the case's ``preflight`` record; the
measurement is the case's ``memory.mlx_peak_bytes`` (MLX allocator peak, reset before the case).
The error is only computed where the estimate was sized for the case's own workload (the
scenario said how many tokens a request holds); an estimate at the policy's default context is
a budget check, not a prediction of that case.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from harness.types import CaseResult

MEASURED = "memory.mlx_peak_bytes"
COMPONENTS = ("weights_bytes", "kv_cache_bytes", "state_bytes", "activation_bytes")


def warning_line(preflight: Mapping[str, Any]) -> str | None:
    """``"warn <code>: <message>"`` when the policy warned about the case, else None."""
    if preflight.get("action") != "warn":
        return None
    return f"warn {preflight.get('code')}: {preflight.get('message')}"


@dataclass(frozen=True)
class PeakCheck:
    """Bytes; ``error`` is (predicted - measured) / measured, None when not comparable."""

    predicted_bytes: int
    measured_bytes: float | None
    context_tokens: int
    prompt_tokens: int | None
    comparable: bool  # the estimate was sized for this case's workload
    components: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    approximate: tuple[str, ...] = ()

    @property
    def error(self) -> float | None:
        if not self.comparable or not self.measured_bytes:
            return None
        return (self.predicted_bytes - self.measured_bytes) / self.measured_bytes


def peak_check(result: CaseResult) -> PeakCheck | None:
    """The case's prediction and measurement; None when the record has no memory estimate."""
    memory = result.preflight.get("memory")
    if not isinstance(memory, Mapping) or memory.get("mlx_peak_bytes") is None:
        return None
    measured = result.metric(MEASURED)
    return PeakCheck(
        predicted_bytes=int(memory["mlx_peak_bytes"]),
        measured_bytes=measured.median if measured is not None and measured.samples else None,
        context_tokens=int(memory.get("context_tokens") or 0),
        prompt_tokens=memory.get("prompt_tokens"),
        comparable=result.preflight.get("context_source") == "scenario",
        components=MappingProxyType({k: int(memory.get(k) or 0) for k in COMPONENTS}),
        approximate=tuple(memory.get("approximate") or ()),
    )
