"""``quant_sweep``'s parameters: which of mlx's weight quantisation modes one case runs, at what
prompt and generation length, and how close the quantised matmul must stay to its own weights
dequantised."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal

from pydantic import Field, model_validator

from harness.backends.weight_quant import WeightQuant
from harness.scenarios.base import Params

QuantName = Literal[
    "none",
    "affine2",
    "affine3",
    "affine4",
    "affine5",
    "affine6",
    "affine8",
    "mxfp4",
    "nvfp4",
    "mxfp8",
]

# name -> (mx.quantize mode, bits, default group size, the group sizes mlx takes)
MODES: Mapping[str, tuple[str, int, int, tuple[int, ...]]] = MappingProxyType(
    {
        **{f"affine{b}": ("affine", b, 64, (32, 64, 128)) for b in (2, 3, 4, 5, 6, 8)},
        "mxfp4": ("mxfp4", 4, 32, (32,)),
        "nvfp4": ("nvfp4", 4, 16, (16,)),
        "mxfp8": ("mxfp8", 8, 32, (32,)),
    }
)
MATMUL_KL_MAX = 1e-3  # nats: float32 kernels differ from the twin by ~1e-7, a wrong one by > 0.1


class QuantSweepParams(Params):
    quant: QuantName = Field(
        "affine4",
        description="weight quantisation: none (the model as loaded), affine2-affine8 "
        "(affine, that many bits), mxfp4, nvfp4 or mxfp8 (mlx's mx.quantize modes)",
    )
    group_size: int | None = Field(
        None,
        description="weights sharing a scale (unset: the mode's own; affine 32, 64 or 128, "
        "default 64; mxfp4 and mxfp8 32; nvfp4 16)",
    )
    prompt_tokens: int = Field(128, ge=2, description="prompt tokens prefilled")
    gen_tokens: int = Field(32, ge=2, description="greedy tokens generated and compared")
    max_matmul_kl: float = Field(
        MATMUL_KL_MAX,
        ge=0,
        description="fail the case when the quantised model's next-token distributions are "
        "further than this (mean KL, nats) from the same quantised weights dequantised and "
        "multiplied plainly: a wrong quantised matmul kernel",
    )

    check_matmul: bool = Field(
        True,
        description="run the matmul check (the twin holds the model's weights dequantised, "
        "at the loaded dtype, for one run: as much memory again as the model as loaded)",
    )

    @model_validator(mode="before")
    @classmethod
    def _group(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        name, size = data.get("quant", "affine4"), data.get("group_size")
        if size is None or name not in MODES:
            return data
        allowed = MODES[name][3]
        if size not in allowed:
            raise ValueError(
                f"group_size {size} is not one {name} takes: {', '.join(map(str, allowed))}"
            )
        return data

    @property
    def weight_quant(self) -> WeightQuant | None:
        """The quantisation asked for (None: the model as loaded)."""
        if self.quant == "none":
            return None
        mode, bits, default, _ = MODES[self.quant]
        return WeightQuant(mode, bits, self.group_size or default)

    @property
    def label(self) -> str:
        quant = self.weight_quant
        return "none" if quant is None else quant.label
