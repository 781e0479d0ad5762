"""Offline GGUF -> MLX importer for llama-family and Gemma 3 (text) language models.

``import_gguf`` writes an mlx-lm model directory; ``read_gguf_header`` reads only the metadata
(fast, for probing); every problem with a file is a one-line :class:`GGUFImportError`.

The package imports nothing itself (import from its modules): probing a GGUF header needs
neither the converter nor numpy until a tensor is read.
"""
