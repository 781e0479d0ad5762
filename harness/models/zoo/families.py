"""The zoo's families: one tiny configuration per architecture the suites cover.

``FAMILIES`` maps family name to :class:`Family`, in table order: the text families (mlx-lm),
then vision (mlx-vlm) and audio (mlx-audio).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness.models.zoo.families_media import MEDIA_FAMILIES
from harness.models.zoo.families_text import LLAMA, TEXT_FAMILIES
from harness.models.zoo.family import BACKENDS, VOCAB_SIZE, Family, LibraryName

__all__ = ["BACKENDS", "FAMILIES", "LLAMA", "VOCAB_SIZE", "Family", "LibraryName"]

FAMILIES: Mapping[str, Family] = MappingProxyType(
    {f.name: f for f in (*TEXT_FAMILIES, *MEDIA_FAMILIES)}
)
