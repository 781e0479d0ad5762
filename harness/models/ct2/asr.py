"""Run a converted Whisper with mlx-audio in float32, and score transcripts (word error rate).

``mlx_audio.stt.load`` builds Whisper with the class's default dtype, float16, and its
``sanitize`` casts every weight to it; there is no option to choose. float16 matmuls are ~35x
slower than float32 on CPU, so :func:`load_whisper` performs the same steps as mlx-audio's
loader (config -> ``Model(dims, dtype)`` -> ``sanitize`` -> ``load_weights(strict=True)`` ->
``post_load_hook``) with ``dtype=float32``; the decoding then runs with ``fp16=False``.
"""

from __future__ import annotations

import json
import re
import wave
from pathlib import Path
from typing import Any

import numpy as np

SAMPLE_RATE = 16000
_DTYPES = ("float32", "float16", "bfloat16")


def load_whisper(model_dir: Path, dtype: str = "float32") -> Any:
    """A converted Whisper directory as an mlx-audio Whisper ``Model`` in ``dtype``."""
    import mlx.core as mx
    from mlx_audio.stt.models.whisper.whisper import Model, ModelDimensions

    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(_DTYPES)}, not {dtype!r}")
    model_dir = Path(model_dir)
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    model = Model(ModelDimensions.from_dict(config), dtype=getattr(mx, dtype))
    weights: dict[str, Any] = {}
    for path in sorted(model_dir.glob("*.safetensors")):
        loaded = mx.load(str(path))
        if not isinstance(loaded, dict):
            raise ValueError(f"{path}: not a safetensors file of named arrays")
        weights.update(loaded)
    model.load_weights(list(model.sanitize(weights).items()), strict=True)
    mx.eval(model.parameters())
    model.eval()
    return Model.post_load_hook(model, model_dir)


def transcribe(model: Any, audio: np.ndarray) -> str:
    """Greedy English transcript of 16 kHz mono float32 ``audio`` (no temperature fallback)."""
    import mlx.core as mx

    result = model.generate(
        mx.array(np.asarray(audio, dtype=np.float32)),
        language="en",
        temperature=0.0,
        condition_on_previous_text=False,
        fp16=model.dtype == mx.float16,
    )
    return str(result.text).strip()


def read_wav(path: Path, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """A 16-bit PCM WAV file as mono float32 in [-1, 1] at ``sample_rate`` (FFT resampling)."""
    with wave.open(str(path), "rb") as handle:
        if handle.getsampwidth() != 2:
            raise ValueError(f"{path}: {8 * handle.getsampwidth()}-bit WAV, expected 16-bit PCM")
        rate, channels = handle.getframerate(), handle.getnchannels()
        raw = handle.readframes(handle.getnframes())
    samples = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    mono = samples.reshape(-1, channels).mean(axis=1)
    return resample(mono, rate, sample_rate)


def resample(audio: np.ndarray, rate: int, target: int) -> np.ndarray:
    """Band-limited resampling by truncating or zero-padding the spectrum."""
    if rate == target or audio.size == 0:
        return audio.astype(np.float32)
    count = round(audio.size * target / rate)
    spectrum = np.fft.rfft(audio.astype(np.float64))
    bins = count // 2 + 1
    resized = np.zeros(bins, dtype=np.complex128)
    keep = min(bins, spectrum.size)
    resized[:keep] = spectrum[:keep]
    out = np.fft.irfft(resized, n=count) * (count / audio.size)
    return out.astype(np.float32)


def normalize_words(text: str) -> list[str]:
    """Lower-cased words with punctuation stripped (apostrophes inside words kept)."""
    cleaned = re.sub(r"[^\w\s']", " ", text.lower())
    return [word.strip("'") for word in cleaned.split() if word.strip("'")]


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word-level edit distance (substitutions, insertions, deletions) / reference words."""
    ref, hyp = normalize_words(reference), normalize_words(hypothesis)
    if not ref:
        return 0.0 if not hyp else float("inf")
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, start=1):
        previous, row[0] = row[0], i
        for j, other in enumerate(hyp, start=1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (word != other))
    return row[-1] / len(ref)
