"""A real OpenAI-compatible HTTP server over the toy model, for the harness's own tests.

    python -m tests.servers.planted_openai --port 0 [--plant NAME] [--token-delay-ms 1]

prints ``READY http://127.0.0.1:PORT`` once it listens, then serves until SIGTERM or SIGINT:
GET /health and /v1/models; POST /v1/chat/completions and /v1/completions, streamed (SSE,
``data: {...}`` events ending with ``data: [DONE]``) and not, with usage (cached prompt tokens
included), ``stream_options.include_usage``, tools, ``<think>`` reasoning, seed, temperature,
top_k, top_p, min_p, max_tokens and stop. A clean server keeps every contract the
``api_contracts`` scenario checks; ``--plant NAME`` breaks exactly one
(:class:`tests.servers.planted_requests.Plant`); ``--metrics`` serves llama-server's
``/metrics`` counters (requests processing, decode steps). ``--model-dir DIR`` writes the toy's
``tokenizer.json`` there first, so a suite can name it with ``path:`` for token counting.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.servers import planted_surfaces as surfaces
from tests.servers.planted_engine import Engine, GenerationDied
from tests.servers.planted_requests import (
    BadRequest,
    Plant,
    Request,
    lenient_request,
    parse_request,
)
from tests.servers.planted_surfaces import ResponseStore
from tests.servers.serve_until_stopped import serve_until_stopped
from tests.servers.toy_model import MODEL_ID, build_tokenizer, write_model_folder

DEFAULT_TOKEN_DELAY_S = 0.001
SURFACES = ("/v1/responses", "/v1/messages", "/v1/embeddings")
ROUTES = {"/v1/chat/completions": True, "/chat/completions": True, "/v1/completions": False}


class PlantedServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], engine: Engine, metrics: bool = False) -> None:
        super().__init__(address, Handler)
        self.engine = engine
        self.metrics = metrics  # serve /metrics, as llama-server --metrics does
        self.responses = ResponseStore()  # /v1/responses' conversations by id

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: PlantedServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read no access log
        return

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        kind = "invalid_request_error" if status < 500 else "server_error"
        self._json(status, {"error": {"message": message, "type": kind, "code": status}})

    def do_GET(self) -> None:
        if self.path == "/health":
            self._json(200, {"status": "ok"})
        elif self.path == "/metrics" and self.server.metrics:
            data = self.server.engine.metrics_text().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif self.path == "/v1/models":
            model = {"id": MODEL_ID, "object": "model", "owned_by": "tests"}
            self._json(200, {"object": "list", "data": [model]})
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        engine = self.server.engine
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self._error(411, "Content-Length is required")
            return
        raw = self.rfile.read(int(length))
        if self.path in SURFACES:
            self._surface(_parse(raw))
            return
        chat = ROUTES.get(self.path)
        if chat is None:
            self._error(404, f"no route {self.path}")
            return
        try:
            request = parse_request(_parse(raw), chat=chat)
        except BadRequest as exc:
            if engine.has(Plant.INVALID_PARAMS_DROP):
                self.close_connection = True  # hang up without a word
                return
            if not engine.has(Plant.INVALID_PARAMS_200):
                self._error(400, str(exc))
                return
            request = lenient_request(_parse(raw), chat=chat)
        if engine.dead:
            self._error(404, "generation thread died")
            return
        xtc = request.xtc_probability > 0 and request.sampling.temperature > 0
        if engine.has(Plant.XTC_DIES) and xtc:
            self.close_connection = True  # the sampler raised: no answer at all
            return
        try:
            if request.stream:
                self._stream(request)
            else:
                self._json(200, engine.complete(request))
        except GenerationDied as exc:
            self._error(404, str(exc))

    def _surface(self, body: Any) -> None:
        """/v1/responses or /v1/messages, through the chat engine."""
        engine = self.server.engine
        if not isinstance(body, dict):
            self._error(400, "the request body must be a JSON object")
            return
        try:
            if self.path == "/v1/responses":
                answer = surfaces.responses(engine, self.server.responses, body)
                events = surfaces.stream_responses
            elif self.path == "/v1/messages":
                answer = surfaces.messages(engine, body)
                events = surfaces.stream_messages
            else:
                self._json(200, surfaces.embeddings(engine, body))
                return
        except BadRequest as exc:
            self._error(400, str(exc))
            return
        if not body.get("stream"):
            self._json(200, answer)
            return
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()

        def send(event: dict[str, Any]) -> None:
            self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()

        events(engine, answer, send)

    def _stream(self, request: Request) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

        def send(event: dict[str, Any]) -> None:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()

        def keepalive() -> None:
            self.wfile.write(b": keepalive\n\n")
            self.wfile.flush()

        try:
            self.server.engine.process_prompt(request, keepalive)
            self.server.engine.stream(request, send)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except OSError:  # the client hung up: nothing more to say
            return


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode())
    except (ValueError, UnicodeDecodeError):
        return None


def make_server(
    host: str = "127.0.0.1",
    port: int = 0,
    plant: Plant | None = None,
    token_delay_s: float = DEFAULT_TOKEN_DELAY_S,
    metrics: bool = False,
    spin: bool = False,
) -> PlantedServer:
    """A listening server (not yet serving: call ``serve_forever``, e.g. in a thread)."""
    engine = Engine(plant, build_tokenizer(), token_delay_s, spin=spin)
    return PlantedServer((host, port), engine, metrics)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.servers.planted_openai")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port (printed)")
    parser.add_argument("--plant", choices=[p.value for p in Plant], default=None)
    parser.add_argument("--token-delay-ms", type=float, default=DEFAULT_TOKEN_DELAY_S * 1000)
    parser.add_argument("--model-dir", type=Path, default=None)
    parser.add_argument("--metrics", action="store_true", help="serve /metrics (llama-server's)")
    parser.add_argument("--spin", action="store_true", help="spend token delays computing")
    args = parser.parse_args(argv)
    if args.model_dir is not None:
        write_model_folder(args.model_dir)
    plant = Plant(args.plant) if args.plant else None
    server = make_server(
        args.host, args.port, plant, args.token_delay_ms / 1000, args.metrics, args.spin
    )
    return serve_until_stopped(server, server.url)


if __name__ == "__main__":
    sys.exit(main())
