"""mlx-audio backend: speech to text (Whisper) and text to speech (mlx-audio's TTS models),
imported lazily, in the worker.

Speech to text: on CPU Whisper is built in float32 (:func:`harness.models.ct2.asr.load_whisper`:
the steps of ``mlx_audio.stt.load`` with the dtype chosen; float16 matmuls are ~35x slower
there); on a GPU (Metal) in float16, as ``mlx_audio.stt.load`` builds it. Decoding is greedy,
English, without conditioning on previous text; audio longer than 30 s runs through Whisper's
own windowing.

Text to speech: any model type mlx-audio files under ``tts`` loads through
``mlx_audio.tts.utils.load_model`` (strict weights) in the dtype it was saved in; synthesis
calls the model's ``generate`` greedily (``temperature=0`` where it takes one) and streams
(``stream=True``) where its ``generate`` names that option.

Both directions share one backend (capabilities: audio in and audio out); a loaded model does
the one its ``model_type`` does and answers the other with one line (the probe routes the
scenarios, so that line is reached only through a mislabelled model).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.backends.base import BackendCapability, BackendError, LoadInfo, SpeechChunk
from harness.core.exception_line import exception_line
from harness.models.tts_generate import float_samples, generate_options

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

WHISPER_RATE = 16000  # Hz: Whisper's feature extractor takes 16 kHz mono
SUPPORTED = ("whisper",)  # speech to text


class MlxAudioTranscriber:
    """A loaded mlx-audio speech-to-text model (:class:`harness.backends.base.Transcribing`)."""

    streams = False

    def __init__(self, model: Any, model_type: str) -> None:
        self.model = model
        self.model_type = model_type

    @property
    def sample_rate(self) -> int:
        return WHISPER_RATE

    def transcribe(self, audio: NDArray[np.float32]) -> str:
        from harness.models.ct2.asr import transcribe

        return transcribe(self.model, audio)

    def synthesize(self, text: str) -> Iterator[SpeechChunk]:
        raise BackendError(f"model_type {self.model_type!r} transcribes speech; it makes none")


class MlxAudioSynthesizer:
    """A loaded mlx-audio text-to-speech model (:class:`harness.backends.base.Synthesizing`)."""

    def __init__(self, model: Any, model_type: str) -> None:
        self.model = model
        self.model_type = model_type
        self._options = generate_options(model.generate)

    @property
    def streams(self) -> bool:
        return "stream" in self._options

    @property
    def sample_rate(self) -> int:
        return int(getattr(self.model, "sample_rate", 0) or 0)

    def transcribe(self, audio: NDArray[np.float32]) -> str:
        raise BackendError(f"model_type {self.model_type!r} makes speech; it does not transcribe")

    def synthesize(self, text: str) -> Iterator[SpeechChunk]:
        for result in self.model.generate(text=text, **self._options):
            yield speech_chunk(result.audio, int(result.sample_rate))


def speech_chunk(audio: Any, sample_rate: int) -> SpeechChunk:
    """An mlx (or numpy) array of samples as a flat float32 :class:`SpeechChunk`."""
    return SpeechChunk(float_samples(audio), sample_rate)


def read_config(path: Path) -> dict[str, Any]:
    """config.json as a mapping; BackendError (one line, naming the file) otherwise."""
    config = path / "config.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackendError(
            f"{config}: cannot read it ({type(exc).__name__}); fix: "
            "point the suite at a model folder with a JSON config.json"
        ) from None
    return data if isinstance(data, dict) else {}


def model_type(path: Path) -> str:
    """config.json's ``model_type`` when the harness transcribes with it; BackendError (one
    line, naming the file) otherwise."""
    kind = read_config(path).get("model_type")
    if kind not in SUPPORTED:
        raise BackendError(
            f"{path / 'config.json'}: model_type {kind!r} has no speech-to-text runner in the "
            f"harness's mlx_audio backend (it runs {', '.join(SUPPORTED)})"
        )
    return str(kind)


def audio_kind(path: Path) -> tuple[str, str]:
    """(``stt`` or ``tts``, model_type) of the model folder; BackendError (one line) when it is
    neither a Whisper nor a model type mlx-audio files under text to speech."""
    kind = read_config(path).get("model_type")
    if kind in SUPPORTED:
        return "stt", str(kind)
    from mlx_audio.utils import get_model_category, get_model_name_parts

    hint = str(kind) if isinstance(kind, str) else ""
    category = get_model_category(hint, get_model_name_parts(path))
    if category != "tts":
        raise BackendError(
            f"{path / 'config.json'}: model_type {kind!r} is neither a speech-to-text model the "
            f"harness runs ({', '.join(SUPPORTED)}) nor an mlx-audio text-to-speech model"
            + (f" (mlx-audio files it under {category})" if category else "")
        )
    return "tts", hint or path.name


class MlxAudioBackend:
    name = "mlx_audio"
    capabilities = frozenset({BackendCapability.AUDIO_IN, BackendCapability.AUDIO_OUT})

    def load(self, path: Path) -> tuple[MlxAudioTranscriber | MlxAudioSynthesizer, LoadInfo]:
        import mlx.core as mx

        from harness.backends.mlx_runtime import loaded_info

        direction, kind = audio_kind(path)
        mx.reset_peak_memory()
        start = time.perf_counter()
        if direction == "tts":
            from mlx_audio.tts.utils import load_model

            try:
                tts = load_model(path)
            except Exception as exc:
                raise BackendError(f"mlx-audio TTS load failed: {exception_line(exc)}") from exc
            return MlxAudioSynthesizer(tts, kind), loaded_info(path, start, dtype=_dtype(tts))
        from harness.models.ct2.asr import load_whisper

        dtype = "float16" if mx.default_device().type == mx.gpu else "float32"
        try:
            model = load_whisper(path, dtype=dtype)
        except Exception as exc:
            raise BackendError(f"mlx-audio Whisper load failed: {exception_line(exc)}") from exc
        return MlxAudioTranscriber(model, kind), loaded_info(path, start, dtype=dtype)


def _dtype(model: Any) -> str:
    """The dtype most of the model's parameters have (``float32``, ``bfloat16`` ...)."""
    from collections import Counter

    from mlx.utils import tree_flatten

    leaves: Any = tree_flatten(model.parameters())  # a list of (name, array) pairs
    counts = Counter(str(array.dtype).removeprefix("mlx.core.") for _name, array in leaves)
    return counts.most_common(1)[0][0] if counts else "unknown"


BACKEND = MlxAudioBackend()
