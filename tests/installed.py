"""``require(module)``: skip the calling test module when ``module`` is not installed, without
importing it. ``pytest.importorskip`` imports it, so every xdist worker's collection paid for
mlx-lm and mlx-vlm (transformers with them: about 2.5 s of CPU each) whether or not it ran
their tests; the tests import them when they run."""

from __future__ import annotations

import importlib.util

import pytest


def require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed", allow_module_level=True)
