"""How the harness calls an mlx-audio text-to-speech model's ``generate`` (shared by the
mlx_audio backend and the audio family sweep): greedy where it samples, streaming where it
streams, and its audio as flat float32 samples."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

STREAM_INTERVAL_S = 0.5  # seconds of audio per streamed chunk, where the model streams


def generate_options(generate: Any) -> dict[str, Any]:
    """Greedy and streaming options for a TTS model's ``generate``, those it names."""
    try:
        names = set(inspect.signature(generate).parameters)
    except (TypeError, ValueError):
        return {}
    options: dict[str, Any] = {}
    if "temperature" in names:
        options["temperature"] = 0.0
    if "stream" in names:
        options["stream"] = True
        if "streaming_interval" in names:
            options["streaming_interval"] = STREAM_INTERVAL_S
    if "verbose" in names:
        options["verbose"] = False
    return options


def float_samples(audio: Any) -> NDArray[np.float32]:
    """An mlx (or numpy) array of samples as flat float32 numpy."""
    import numpy as np

    if type(audio).__module__.startswith("mlx"):
        import mlx.core as mx

        audio = audio.astype(mx.float32)
    return np.asarray(audio, dtype=np.float32).reshape(-1)
