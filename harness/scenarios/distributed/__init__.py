"""``distributed``: the model sharded over an ``mx.distributed`` group (pipeline or tensor),
launched by ``mlx.launch``, against the same model in one process
(:mod:`harness.scenarios.distributed.scenario`)."""

from harness.scenarios.distributed.params import DistributedParams
from harness.scenarios.distributed.scenario import NOT_APPLICABLE, SCENARIO, DistributedScenario

__all__ = ["NOT_APPLICABLE", "SCENARIO", "DistributedParams", "DistributedScenario"]
