"""mlx-audio backend: speech to text with mlx-audio's Whisper (imported lazily, in the worker).

On CPU the model is built in float32 (:func:`harness.models.ct2.asr.load_whisper`: the steps of
``mlx_audio.stt.load`` with the dtype chosen; float16 matmuls are ~35x slower there); on a GPU
(Metal) in float16, as ``mlx_audio.stt.load`` builds it. Decoding is greedy, English, without
conditioning on previous text; audio longer than 30 s runs through Whisper's own windowing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.backends.base import BackendCapability, BackendError, LoadInfo
from harness.exception_line import exception_line

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

WHISPER_RATE = 16000  # Hz: Whisper's feature extractor takes 16 kHz mono
SUPPORTED = ("whisper",)


class MlxAudioTranscriber:
    """A loaded mlx-audio speech-to-text model (:class:`harness.backends.base.Transcribing`)."""

    def __init__(self, model: Any, model_type: str) -> None:
        self.model = model
        self.model_type = model_type

    @property
    def sample_rate(self) -> int:
        return WHISPER_RATE

    def transcribe(self, audio: NDArray[np.float32]) -> str:
        from harness.models.ct2.asr import transcribe

        return transcribe(self.model, audio)


def model_type(path: Path) -> str:
    """config.json's ``model_type``; BackendError (one line, naming the file) otherwise."""
    config = path / "config.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackendError(
            f"{config}: cannot read it ({type(exc).__name__}); fix: "
            "point the suite at a model folder with a JSON config.json"
        ) from None
    kind = data.get("model_type") if isinstance(data, dict) else None
    if kind not in SUPPORTED:
        raise BackendError(
            f"{config}: model_type {kind!r} has no speech-to-text runner in the harness's "
            f"mlx_audio backend (it runs {', '.join(SUPPORTED)})"
        )
    return str(kind)


class MlxAudioBackend:
    name = "mlx_audio"
    capabilities = frozenset({BackendCapability.AUDIO_IN})

    def load(self, path: Path) -> tuple[MlxAudioTranscriber, LoadInfo]:
        import mlx.core as mx

        from harness.backends.mlx_runtime import loaded_info
        from harness.models.ct2.asr import load_whisper

        kind = model_type(path)
        dtype = "float16" if mx.default_device().type == mx.gpu else "float32"
        mx.reset_peak_memory()
        start = time.perf_counter()
        try:
            model = load_whisper(path, dtype=dtype)
        except Exception as exc:
            raise BackendError(f"mlx-audio Whisper load failed: {exception_line(exc)}") from exc
        info = loaded_info(path, start, dtype=dtype)
        return MlxAudioTranscriber(model, kind), info


BACKEND = MlxAudioBackend()
