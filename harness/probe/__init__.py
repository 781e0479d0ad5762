"""Probe models before loading them (no mlx import), then decide whether and how to run them.

``probe_model(path)`` reads config, tokenizer, processor and weight headers; ``decide`` turns a
probe, the capabilities a scenario needs and a memory budget into allow / warn / block with a
reason code; ``estimate_memory`` predicts the MLX peak for a context length and
``available_memory`` reads the machine's. Build one ``Stack`` (``detect_stack()``) per process.
"""

from __future__ import annotations

from harness.probe.installed import Stack, detect_stack
from harness.probe.machine import MemoryBudget, available_memory
from harness.probe.memory import MemoryEstimate, estimate_memory
from harness.probe.policy import Action, Decision, decide
from harness.probe.probe import ProbeError, probe_model
from harness.probe.types import Capability, Library, Probe, ReasonCode, WeightFormat

__all__ = [
    "Action",
    "Capability",
    "Decision",
    "Library",
    "MemoryBudget",
    "MemoryEstimate",
    "Probe",
    "ProbeError",
    "ReasonCode",
    "Stack",
    "WeightFormat",
    "available_memory",
    "decide",
    "detect_stack",
    "estimate_memory",
    "probe_model",
]
