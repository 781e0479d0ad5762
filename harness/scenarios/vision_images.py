"""Test images made in code (never downloaded): seeded, distinct per index, any square size.

Each image is a colour gradient with a checkerboard whose cell size and colours follow from
``index``, so two images of one prompt differ and the same index always gives the same pixels.
"""

from __future__ import annotations

from typing import Any


def pattern_image(index: int, px: int) -> Any:
    """A ``px`` x ``px`` RGB ``PIL.Image.Image`` for ``index`` (imports numpy and Pillow)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(index)
    y, x = np.mgrid[0:px, 0:px].astype(np.float32) / max(px - 1, 1)
    cell = max(px // int(rng.integers(4, 12)), 1)
    checker = ((np.arange(px)[:, None] // cell + np.arange(px)[None, :] // cell) % 2).astype(
        np.float32
    )
    colours = rng.uniform(0.0, 1.0, size=(3, 3)).astype(np.float32)
    channels = [colours[c, 0] * x + colours[c, 1] * y + colours[c, 2] * checker for c in range(3)]
    pixels = np.stack(channels, axis=-1)
    pixels = 255.0 * pixels / max(float(pixels.max()), 1e-6)
    return Image.fromarray(pixels.astype(np.uint8), mode="RGB")


def pattern_images(count: int, px: int, *, first: int = 0) -> list[Any]:
    """``count`` distinct images of ``px`` pixels a side, indexes ``first``, ``first + 1``, ..."""
    return [pattern_image(first + i, px) for i in range(count)]
