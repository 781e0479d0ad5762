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

from harness.core.metrics import MLX_PEAK
from harness.core.preflight_types import PolicyAction, PreflightRecord
from harness.core.types import CaseResult

MEASURED = MLX_PEAK  # what the estimate predicts: the MLX allocator peak of the case


def warning_line(preflight: PreflightRecord | None) -> str | None:
    """``"warn <code>: <message>"`` when the policy warned about the case, else None."""
    if preflight is None or preflight.action is not PolicyAction.WARN:
        return None
    return f"warn {preflight.code}: {preflight.message}"


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
    preflight = result.preflight
    memory = preflight.memory if preflight is not None else None
    if preflight is None or memory is None or memory.mlx_peak_bytes is None:
        return None
    measured = result.metric(MEASURED.name)
    return PeakCheck(
        predicted_bytes=memory.mlx_peak_bytes,
        measured_bytes=measured.median if measured is not None and measured.samples else None,
        context_tokens=memory.context_tokens,
        prompt_tokens=memory.prompt_tokens,
        comparable=preflight.comparable,
        components=memory.components,
        approximate=memory.approximate,
    )
