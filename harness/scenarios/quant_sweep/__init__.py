"""``quant_sweep``: one of mlx's weight quantisation modes against the model as loaded
(:mod:`harness.scenarios.quant_sweep.scenario`)."""

from harness.scenarios.quant_sweep.params import MODES, QuantSweepParams
from harness.scenarios.quant_sweep.scenario import NOT_APPLICABLE, SCENARIO, QuantSweepScenario

__all__ = ["MODES", "NOT_APPLICABLE", "SCENARIO", "QuantSweepParams", "QuantSweepScenario"]
