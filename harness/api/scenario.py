"""The contract of a scenario plug-in (entry-point group ``mlx_harness.scenarios``): the
:class:`Scenario` protocol, every optional part of which :class:`BaseScenario` declares with
its default, the :class:`Params` its cases validate into, and what ``run`` returns: a
:class:`ScenarioOutput` of :class:`Metric` values described by :class:`MetricSpec` (and each
named check's :class:`CheckVerdict`). Re-exported by :mod:`harness.api`, which plug-ins
import."""

from __future__ import annotations

from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.metrics import MetricSpec, VariesBy
from harness.core.types import Metric, Status, Unit
from harness.scenarios.base import (
    BaseScenario,
    Params,
    Scenario,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
    metric,
)

__all__ = [
    "BaseScenario",
    "CheckStatus",
    "CheckVerdict",
    "Metric",
    "MetricSpec",
    "Params",
    "Scenario",
    "ScenarioContext",
    "ScenarioOutput",
    "Status",
    "Unit",
    "VariesBy",
    "Workload",
    "lacks",
    "metric",
]
