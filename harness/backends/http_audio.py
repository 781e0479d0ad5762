"""Speech over an OpenAI-compatible server: ``POST /v1/audio/transcriptions`` (a WAV upload,
multipart) and ``POST /v1/audio/speech`` (JSON in, WAV out), as mlx-audio's server serves them.

A failed or timed-out request is a :class:`BackendError` of one line: the HTTP status or error,
and, for a server the harness started, the last lines of its log (where a server that accepts
requests but cannot run them says why).
"""

from __future__ import annotations

import io
import wave
from collections.abc import Callable
from typing import TYPE_CHECKING

from harness.backends.base import BackendError, SpeechChunk
from harness.backends.openai_client import Endpoint, excerpt, sync_client

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

REQUEST_TIMEOUT_S = 120.0  # one clip or sentence; a server that hangs costs this once


def wav_bytes(audio: NDArray[np.float32], rate: int) -> bytes:
    """Mono float32 samples in [-1, 1] as a 16-bit PCM WAV file."""
    import numpy as np

    pcm = (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm)
    return out.getvalue()


def wav_samples(data: bytes) -> SpeechChunk:
    """A 16-bit PCM WAV file (mono, or channels averaged) as float32 samples and their rate."""
    import numpy as np

    try:
        with wave.open(io.BytesIO(data), "rb") as wav:
            rate, channels, width = wav.getframerate(), wav.getnchannels(), wav.getsampwidth()
            frames = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as exc:
        raise BackendError(f"the server's speech is not a WAV file ({exc})") from None
    if width != 2:
        raise BackendError(f"the server's WAV has {8 * width}-bit samples; 16-bit expected")
    samples = np.frombuffer(frames, "<i2").astype(np.float32) / 32768.0
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    return SpeechChunk(samples.astype(np.float32), rate)


def _failure(what: str, detail: str, log_tail: Callable[[], str] | None) -> BackendError:
    tail = log_tail() if log_tail is not None else ""
    return BackendError(f"{what}: {detail}" + (f"; server log: {tail}" if tail else ""))


def transcribe(
    endpoint: Endpoint,
    audio: NDArray[np.float32],
    rate: int,
    *,
    log_tail: Callable[[], str] | None = None,
    timeout_s: float = REQUEST_TIMEOUT_S,
) -> str:
    import httpx

    what = f"POST {endpoint.url('/v1/audio/transcriptions')}"
    form = {"model": endpoint.model or "", "language": "en"}
    files = {"file": ("clip.wav", wav_bytes(audio, rate), "audio/wav")}
    try:
        with sync_client(timeout_s) as client:
            reply = client.post(
                endpoint.url("/v1/audio/transcriptions"),
                data=form,
                files=files,
                headers=endpoint.headers(),
            )
    except httpx.HTTPError as exc:
        raise _failure(what, f"{type(exc).__name__} after {timeout_s:.0f} s", log_tail) from None
    if reply.status_code != 200:
        raise _failure(what, f"HTTP {reply.status_code} {excerpt(reply.text)}", log_tail)
    try:
        body = reply.json()
    except ValueError:
        return reply.text.strip()
    text = body.get("text") if isinstance(body, dict) else None
    if not isinstance(text, str):
        raise _failure(what, f"no text in the reply: {excerpt(reply.text)}", log_tail)
    return text.strip()


def synthesize(
    endpoint: Endpoint,
    text: str,
    *,
    log_tail: Callable[[], str] | None = None,
    timeout_s: float = REQUEST_TIMEOUT_S,
) -> SpeechChunk:
    import httpx

    what = f"POST {endpoint.url('/v1/audio/speech')}"
    body = endpoint.body({"input": text, "response_format": "wav", "temperature": 0.0})
    try:
        with sync_client(timeout_s) as client:
            reply = client.post(
                endpoint.url("/v1/audio/speech"), json=body, headers=endpoint.headers()
            )
    except httpx.HTTPError as exc:
        raise _failure(what, f"{type(exc).__name__} after {timeout_s:.0f} s", log_tail) from None
    if reply.status_code != 200:
        raise _failure(what, f"HTTP {reply.status_code} {excerpt(reply.text)}", log_tail)
    return wav_samples(reply.content)
