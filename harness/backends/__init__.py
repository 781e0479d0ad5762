"""Backends: one module each, loading a model through a real library (imported lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.core.registry import Registry

if TYPE_CHECKING:
    from harness.backends.base import Backend

BACKENDS: Registry[Backend] = Registry(
    "backend",
    {
        "mlx_lm": "harness.backends.mlx_lm:BACKEND",
        "fake": "harness.backends.fake:BACKEND",
        "mlx_vlm": "harness.backends.mlx_vlm:BACKEND",
        "mlx_audio": "harness.backends.mlx_audio:BACKEND",
        "http": "harness.backends.http:BACKEND",
    },
    group="mlx_harness.backends",
)
