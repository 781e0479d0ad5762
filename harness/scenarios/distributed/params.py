"""``distributed``'s parameters: the world size and split of one case, the launcher, and the
prompts and link buffers every rank runs."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from harness.backends.distributed_types import Split
from harness.core.value_errors import value_error
from harness.scenarios.base import Params

LINK_SIZES_BYTES = (4096, 262144, 4194304)  # 4 KiB, 256 KiB, 4 MiB


class DistributedParams(Params):
    world_size: int = Field(2, ge=1, le=64, description="ranks in the group (1: a group of one)")
    split: Literal["none", "pipeline", "tensor"] = Field(
        "tensor",
        description="how the model is spread: tensor (model.shard), pipeline "
        "(model.model.pipeline) or none (world size 1)",
    )
    backend: Literal["ring", "jaccl", "jaccl-ring", "mpi"] = Field(
        "ring", description="mlx.launch's backend (ring here; jaccl over Thunderbolt RDMA)"
    )
    hostfile: str | None = Field(
        None,
        description="mlx.launch's JSON hostfile naming the cluster's hosts (unset: every rank "
        "on this machine, ring over loopback)",
    )
    shared_dir: str | None = Field(
        None,
        description="a folder every host sees at the same path, for the ranks' results "
        "(a cluster run; unset: a temporary folder here)",
    )
    prompt_tokens: int = Field(16, ge=2, description="prompt tokens prefilled")
    gen_tokens: int = Field(8, ge=2, description="greedy tokens generated and compared")
    link_sizes_bytes: tuple[int, ...] = Field(
        LINK_SIZES_BYTES,
        min_length=1,
        description="buffer sizes timed between ranks before the run (all_sum, send/recv)",
        json_schema_extra={"unit": "B"},
    )
    link_iterations: int = Field(5, ge=1, le=1000, description="timed ops per buffer size")
    launch_timeout_s: float = Field(
        600.0,
        gt=0,
        description="the world's launch is killed (and its ranks named) past this",
        json_schema_extra={"unit": "s"},
    )

    @model_validator(mode="after")
    def _split_fits(self) -> DistributedParams:
        if self.world_size == 1 and self.split != "none":
            raise value_error(
                f"split {self.split} needs 2 ranks or more", "set world_size: 2 or split: none"
            )
        if self.world_size > 1 and self.split == "none":
            raise value_error(
                f"world_size {self.world_size} with split none runs the whole model on every rank",
                "set split: tensor or pipeline",
            )
        return self

    @property
    def split_kind(self) -> Split:
        return Split(self.split)

    @property
    def label(self) -> str:
        return f"{self.split} x{self.world_size}"
