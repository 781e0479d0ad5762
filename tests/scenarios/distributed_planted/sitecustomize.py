"""Planted into the ranks of a distributed run (``PYTHONPATH`` = this folder): rank 1's tensor
shards are perturbed (every weight ``shard_linear`` gives it scaled by 1.5), so the group's
greedy tokens move away from the same model's in one process. The identical-output check must
name it. Only a rank (``MLX_RANK`` set) is touched: ``mlx.launch`` and rank 0 run as shipped."""

from __future__ import annotations

import os
from typing import Any

PERTURBED_RANK = "1"
SCALE = 1.5


def _install() -> None:
    if os.environ.get("MLX_RANK") != PERTURBED_RANK:
        return
    import mlx.nn.layers.distributed as distributed

    real = distributed.shard_linear

    def perturbed(*args: Any, **kwargs: Any) -> Any:
        layer = real(*args, **kwargs)
        layer.weight = layer.weight * SCALE
        return layer

    distributed.shard_linear = perturbed


_install()
