"""Probe models before loading them (no mlx import), then decide whether and how to run them.

``probe_model(path)`` reads config, tokenizer, processor and weight headers; ``decide`` turns a
probe, the capabilities a scenario needs and a memory budget into allow / warn / block with a
reason code; ``estimate_memory`` predicts the MLX peak for a context length and
``available_memory`` reads the machine's. Build one ``Stack`` (``detect_stack()``) per process.

The package imports nothing itself: import from its modules (``harness.probe.probe``,
``harness.probe.policy``...), so that reading one type does not load the GGUF reader and numpy
(a worker that runs a fake or served model never needs them).
"""
