"""Weight quantisation of a loaded model (:class:`harness.backends.base.WeightQuantizing`): the
same weights stored in one of mlx's quantisation modes, what the ``quant_sweep`` scenario
compares against the model as loaded.

A mode is mlx's ``mx.quantize`` ``mode`` with its bits and group size (affine 2-8 bits in groups
of 32, 64 or 128; mxfp4 4 bits in groups of 32; nvfp4 4 bits in groups of 16; mxfp8 8 bits in
groups of 32). Quantising gives two models: the quantised one, whose layers multiply through
mlx's quantised matmul kernels, and its *dequantised twin*, the very same quantised weights
expanded back into plain layers (``mx.dequantize``), multiplied by the ordinary matmul. The twin
is the check on the kernels: both compute the same function, so what separates their answers is
rounding, and a quantised matmul that is wrong on some path (mlx#3854: nvfp4) shows as a gap."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class WeightQuant:
    """One quantisation: mlx's ``mode`` (``affine``, ``mxfp4``, ``nvfp4``, ``mxfp8``), ``bits``
    per weight and ``group_size`` weights sharing a scale."""

    mode: str
    bits: int
    group_size: int

    @property
    def label(self) -> str:
        """``affine 4-bit g64``, ``nvfp4``: the mode as a person reads it."""
        if self.mode == "affine":
            return f"affine {self.bits}-bit g{self.group_size}"
        return self.mode


@dataclass(frozen=True)
class QuantizedWeights:
    """What quantising gave: ``model`` (quantised layers, mlx's kernels), a loaded model of the
    backend, and ``twin()``, which makes the same quantised weights dequantised into plain
    layers (made on demand: held only while the check runs); ``weight_bytes`` the quantised
    model's parameters (data, scales and biases), next to the model's own
    (``reference_weight_bytes``); ``layers`` the layers quantised, ``unchecked`` the quantised
    layers the twin cannot expand (their kernels are then on both sides)."""

    model: object
    twin: Callable[[], object]
    weight_bytes: int
    reference_weight_bytes: int
    layers: int
    unchecked: int = 0
