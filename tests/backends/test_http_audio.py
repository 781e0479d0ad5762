"""Speech over HTTP: WAV in and out, the transcription and speech requests against a local
stand-in server, one-line failures with the server's log tail, and the mlx_audio engine's
command line."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from harness.backends.base import BackendCapability, BackendError, Synthesizing, Transcribing
from harness.backends.http import BACKEND, ServedModel
from harness.backends.http_audio import synthesize, transcribe, wav_bytes, wav_samples
from harness.backends.openai_client import Endpoint
from harness.backends.server_engines import ServerEngine, launch


class Handler(BaseHTTPRequestHandler):
    """Answers like mlx-audio's server; each server keeps the requests it saw (``server.seen``)."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.seen.append((self.path, body))  # type: ignore[attr-defined]
        if self.path == "/v1/audio/transcriptions":
            self._reply(200, "application/json", json.dumps({"text": " birch canoe "}).encode())
        elif self.path == "/v1/audio/speech" and b"broken" not in body:
            self._reply(200, "audio/wav", wav_bytes(np.full(2400, 0.25, np.float32), 24000))
        else:
            self._reply(500, "text/plain", b"no such model")

    def _reply(self, status: int, kind: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()


@pytest.fixture
def endpoint(server: ThreadingHTTPServer) -> Endpoint:
    return Endpoint(f"http://127.0.0.1:{server.server_address[1]}", model="/models/whisper")


def seen(endpoint: Endpoint, server: ThreadingHTTPServer) -> list[tuple[str, bytes]]:
    return list(server.seen)  # type: ignore[attr-defined]


def test_wav_round_trip_and_bad_wav() -> None:
    audio = np.array([0.0, 0.5, -0.5, 1.0, -1.0], np.float32)
    back = wav_samples(wav_bytes(audio, 16000))
    assert back.sample_rate == 16000 and back.audio.dtype == np.float32
    assert np.allclose(back.audio, audio, atol=1 / 16384)
    with pytest.raises(BackendError, match="not a WAV file"):
        wav_samples(b"RIFF nonsense")


def test_transcribe_uploads_a_wav_and_names_the_model(
    endpoint: Endpoint, server: ThreadingHTTPServer
) -> None:
    text = transcribe(endpoint, np.zeros(1600, np.float32), 16000)
    assert text == "birch canoe"
    path, body = seen(endpoint, server)[0]
    assert path == "/v1/audio/transcriptions"
    assert b'name="model"' in body and b"/models/whisper" in body and b"RIFF" in body


def test_synthesize_returns_the_servers_wav(
    endpoint: Endpoint, server: ThreadingHTTPServer
) -> None:
    chunk = synthesize(endpoint, "The birch canoe.")
    assert chunk.sample_rate == 24000 and chunk.audio.size == 2400
    request = json.loads(seen(endpoint, server)[0][1])
    assert request == {
        "input": "The birch canoe.",
        "response_format": "wav",
        "temperature": 0.0,
        "model": "/models/whisper",
    }


def test_a_failed_request_is_one_line_with_the_log_tail(endpoint: Endpoint) -> None:
    with pytest.raises(BackendError) as info:
        synthesize(endpoint, "broken", log_tail=lambda: "ValueError: no gpu")
    message = str(info.value)
    assert message.startswith(f"POST {endpoint.url('/v1/audio/speech')}: HTTP 500: 'no such model")
    assert message.endswith("; server log: ValueError: no gpu") and "\n" not in message


def test_a_server_that_is_not_there_is_one_line() -> None:
    dead = Endpoint("http://127.0.0.1:9", model="m")  # discard port: nothing listens
    with pytest.raises(BackendError, match=r": cannot connect \(ConnectError: "):
        transcribe(dead, np.zeros(16, np.float32), 16000, timeout_s=1.0)


def test_served_models_speak_both_directions(endpoint: Endpoint) -> None:
    model = ServedModel(endpoint, "mlx_audio.server", None)
    assert isinstance(model, Transcribing) and isinstance(model, Synthesizing)
    assert not model.streams and model.transcribe(np.zeros(160, np.float32)) == "birch canoe"
    assert [c.sample_rate for c in model.synthesize("hello")] == [24000]
    assert {BackendCapability.AUDIO_IN, BackendCapability.AUDIO_OUT} <= BACKEND.capabilities


def test_mlx_audio_engine_command(tmp_path: Path) -> None:
    found = launch(ServerEngine.MLX_AUDIO, tmp_path / "whisper", 8123, ["--x"], tmp_path)
    argv = found.command.argv
    assert "mlx_audio.server" in argv and "--model" not in argv
    assert argv[-5:] == ("--host", "127.0.0.1", "--port", "8123", "--x")
    assert found.command.health_url.endswith(":8123/v1/models")
    assert found.request_model == str(tmp_path / "whisper")
    assert ServerEngine.MLX_AUDIO.label == "mlx_audio.server"


def test_a_server_that_trickles_forever_is_cut_at_the_whole_answer_deadline() -> None:
    """A byte every 50 ms keeps every read alive: only the whole-answer deadline ends it."""
    from tests.servers.hostile_openai import Mode, hostile_server

    with hostile_server() as server:
        endpoint = Endpoint(server.mode_url(Mode.ENDLESS), model="m")
        with pytest.raises(BackendError) as info:
            synthesize(endpoint, "forever", timeout_s=1.0)
    message = str(info.value)
    assert "/v1/audio/speech: no complete answer within 1 s (the request's limit); " in message
    assert "\n" not in message
