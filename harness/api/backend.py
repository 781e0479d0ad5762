"""The contract of a backend plug-in (entry-point group ``mlx_harness.backends``): a ``name``,
its ``capabilities`` (a frozenset of :class:`BackendCapability`) and ``load(path) -> (model,
LoadInfo)``; the model implements the protocol of each capability it declares. Re-exported by
:mod:`harness.api`, which plug-ins import."""

from __future__ import annotations

from harness.backends.base import (
    Backend,
    BackendCapability,
    BackendError,
    BatchGenerating,
    ConstrainedDecoding,
    DraftDecoding,
    DraftedToken,
    ImageInput,
    ImagePrompt,
    LoadedModel,
    LoadInfo,
    Probing,
    PromptCaching,
    PromptEncoding,
    QuantUnsupported,
    SpeechChunk,
    Synthesizing,
    ToolCalling,
    Transcribing,
    WeightQuantizing,
)
from harness.backends.weight_quant import QuantizedWeights, WeightQuant
from harness.probe.types import Capability, Probe

__all__ = [
    "Backend",
    "BackendCapability",
    "BackendError",
    "BatchGenerating",
    "Capability",
    "ConstrainedDecoding",
    "DraftDecoding",
    "DraftedToken",
    "ImageInput",
    "ImagePrompt",
    "LoadInfo",
    "LoadedModel",
    "Probe",
    "Probing",
    "PromptCaching",
    "PromptEncoding",
    "QuantUnsupported",
    "QuantizedWeights",
    "SpeechChunk",
    "Synthesizing",
    "ToolCalling",
    "Transcribing",
    "WeightQuant",
    "WeightQuantizing",
]
