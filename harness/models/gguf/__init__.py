"""Offline GGUF -> MLX importer for llama-family and Gemma 3 (text) language models.

``import_gguf`` writes an mlx-lm model directory; ``read_gguf_header`` reads only the metadata
(fast, for probing); every problem with a file is a one-line :class:`GGUFImportError`.
"""

from __future__ import annotations

from harness.models.gguf.archs import supported_architectures
from harness.models.gguf.convert import CONVERTER_VERSION, DTYPES, ImportSummary, import_gguf
from harness.models.gguf.errors import GGUFImportError
from harness.models.gguf.reader import GGUFHeader, read_gguf_header

__all__ = [
    "CONVERTER_VERSION",
    "DTYPES",
    "GGUFHeader",
    "GGUFImportError",
    "ImportSummary",
    "import_gguf",
    "read_gguf_header",
    "supported_architectures",
]
