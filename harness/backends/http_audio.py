"""Speech over an OpenAI-compatible server: ``POST /v1/audio/transcriptions`` (a WAV upload,
multipart) and ``POST /v1/audio/speech`` (JSON in, WAV out), as mlx-audio's server serves them.

Both are read by the guarded client (:func:`harness.backends.openai_client.fetch`): a deadline
for the whole answer and a size cap. A failed or timed-out request is a :class:`BackendError` of
one line: the cause (the timeout and how far the answer came, the status with the server's own
message, a redirect and its target) and, for a server the harness started, the last lines of
its log (where a server that accepts requests but cannot run them says why).
"""

from __future__ import annotations

import io
import json
import wave
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness.backends.base import BackendError, SpeechChunk
from harness.backends.openai_client import (
    Endpoint,
    RawAnswer,
    excerpt,
    failure_line,
    fetch,
    sync_client,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

REQUEST_TIMEOUT_S = 120.0  # one clip or sentence, whole answer; a server that hangs costs this once
SPEECH_CAP_BYTES = 64 * 2**20  # a WAV of one sentence: minutes of audio fit many times over


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


def _answer(what: str, raw: RawAnswer, log_tail: Callable[[], str] | None) -> bytes:
    """The body of a 200, or a BackendError naming the cause (the client's error, or the
    status with the server's own message)."""
    if raw.error is not None:
        raise _failure(what, raw.error, log_tail)
    if raw.status != 200:
        body = _json(raw.data)
        line = failure_line(
            raw.status, None, body, raw.data.decode(errors="replace"), "", raw.location
        )
        raise _failure(what, line or f"HTTP {raw.status}", log_tail)
    return raw.data


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def transcribe(
    endpoint: Endpoint,
    audio: NDArray[np.float32],
    rate: int,
    *,
    log_tail: Callable[[], str] | None = None,
    timeout_s: float = REQUEST_TIMEOUT_S,
) -> str:
    path = "/v1/audio/transcriptions"
    what = f"POST {endpoint.url(path)}"
    form = {"model": endpoint.model or "", "language": "en"}
    files = {"file": ("clip.wav", wav_bytes(audio, rate), "audio/wav")}
    with sync_client(timeout_s) as client:
        raw = fetch(client, endpoint, "POST", path, form=form, files=files)
    data = _answer(what, raw, log_tail)
    text_body = data.decode(errors="replace")
    body = _json(data)
    if body is None:
        return text_body.strip()
    text = body.get("text") if isinstance(body, dict) else None
    if not isinstance(text, str):
        raise _failure(what, f"no text in the reply: {excerpt(text_body)}", log_tail)
    return text.strip()


def synthesize(
    endpoint: Endpoint,
    text: str,
    *,
    log_tail: Callable[[], str] | None = None,
    timeout_s: float = REQUEST_TIMEOUT_S,
) -> SpeechChunk:
    path = "/v1/audio/speech"
    what = f"POST {endpoint.url(path)}"
    body = endpoint.body({"input": text, "response_format": "wav", "temperature": 0.0})
    with sync_client(timeout_s) as client:
        raw = fetch(client, endpoint, "POST", path, payload=body, cap_bytes=SPEECH_CAP_BYTES)
    return wav_samples(_answer(what, raw, log_tail))
