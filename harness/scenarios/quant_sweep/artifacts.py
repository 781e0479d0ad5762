"""What a ``quant_sweep`` case records beside its metrics that the report reads, typed."""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenarios.artifacts import ScenarioArtifacts


@dataclass(frozen=True)
class QuantSweepArtifacts(ScenarioArtifacts):
    quant: str | None = None  # the quantization's label (mode, bits, group size)
    gen_tokens: int | None = None
