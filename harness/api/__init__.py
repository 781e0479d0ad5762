"""The plug-in face of mlx-harness: everything a backend or scenario plug-in imports, and nothing
else. Modules under ``harness.*`` are internal and move without notice; the names here stay
(a removal is a breaking change, named in the CHANGELOG).

A backend (entry-point group ``mlx_harness.backends``) has a ``name``, its ``capabilities`` (a
frozenset of :class:`BackendCapability`) and ``load(path) -> (model, LoadInfo)``; the model
implements the protocol of each capability it declares (:class:`LoadedModel` for text
generation, :class:`PromptCaching`, :class:`ToolCalling`, :class:`DraftDecoding`, ...). A
scenario (group ``mlx_harness.scenarios``) subclasses :class:`BaseScenario` with a
:class:`Params` model and returns a :class:`ScenarioOutput` of :class:`Metric` values described
by :class:`MetricSpec` (and, for a scenario of several named checks, each check's
:class:`CheckVerdict`, which compare, the pin-set comparison and bisect judge one by one).
A report section (group ``mlx_harness.report_sections``) is a :class:`Section` whose
``templates`` folder holds ``<key>.md.j2`` and ``<key>.html.j2``; its ``build(run)`` returns the
data they show (a :class:`Table` of :class:`Cell` rows renders with ``table.*.j2``).
docs/extending.md shows a backend; ``tests/backends/test_entry_point_backend.py`` installs that
very example, and a scenario plug-in beside it, as packages with entry points.

The names come from one module per kind of plug-in, :mod:`harness.api.backend`,
:mod:`harness.api.scenario` and :mod:`harness.api.report` (each may be imported on its own);
this package re-exports them all, so ``from harness.api import X`` works for every one.
"""

from __future__ import annotations

from harness.api.backend import (
    Backend,
    BackendCapability,
    BackendError,
    BatchGenerating,
    Capability,
    ConstrainedDecoding,
    DraftDecoding,
    DraftedToken,
    ImageInput,
    ImagePrompt,
    LoadedModel,
    LoadInfo,
    Probe,
    Probing,
    PromptCaching,
    PromptEncoding,
    QuantizedWeights,
    QuantUnsupported,
    SpeechChunk,
    Synthesizing,
    ToolCalling,
    Transcribing,
    WeightQuant,
    WeightQuantizing,
)
from harness.api.report import Cell, Column, Section, Table
from harness.api.scenario import (
    BaseScenario,
    CheckStatus,
    CheckVerdict,
    Metric,
    MetricSpec,
    Params,
    Scenario,
    ScenarioContext,
    ScenarioOutput,
    Status,
    Unit,
    VariesBy,
    Workload,
    lacks,
    metric,
)

__all__ = [
    "Backend",
    "BackendCapability",
    "BackendError",
    "BaseScenario",
    "BatchGenerating",
    "Capability",
    "Cell",
    "CheckStatus",
    "CheckVerdict",
    "Column",
    "ConstrainedDecoding",
    "DraftDecoding",
    "DraftedToken",
    "ImageInput",
    "ImagePrompt",
    "LoadInfo",
    "LoadedModel",
    "Metric",
    "MetricSpec",
    "Params",
    "Probe",
    "Probing",
    "PromptCaching",
    "PromptEncoding",
    "QuantUnsupported",
    "QuantizedWeights",
    "Scenario",
    "ScenarioContext",
    "ScenarioOutput",
    "Section",
    "SpeechChunk",
    "Status",
    "Synthesizing",
    "Table",
    "ToolCalling",
    "Transcribing",
    "Unit",
    "VariesBy",
    "WeightQuant",
    "WeightQuantizing",
    "Workload",
    "lacks",
    "metric",
]
