"""The smallest scenario the base class makes whole: only what every scenario must name."""

from __future__ import annotations

from typing import Any

from harness.scenarios.base import BaseScenario, ScenarioContext
from harness.scenarios.load import LoadParams


class MinimalScenario(BaseScenario[LoadParams]):
    name = "minimal"
    version = 1
    params_model = LoadParams
    metrics = ()

    def run(self, ctx: ScenarioContext, params: LoadParams) -> Any:
        return None
