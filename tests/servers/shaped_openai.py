"""An OpenAI-compatible streaming server whose timing a test shapes, in a thread of the test's
process: a bounded number of slots (a request waits for one: a queue that grows past the
server's capacity), a prefill time per prompt word, a delay per generated token, and, planted,
a prefill that stalls every running stream (no chunked prefill: decode waits for it).

    with shaped_server(slots=1, token_s=0.005) as url:
        ...  # http://127.0.0.1:PORT

Each generated token is one word (`` w``) in a chunk of its own; usage counts them.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Shape:
    slots: int = 0  # 0: no bound
    first_token_s: float = 0.0  # a slot's work before its first token, whatever the prompt
    token_s: float = 0.002
    prefill_s_per_word: float = 0.0
    stall: bool = False  # planted: a prefill holds every decode step until it ends


class _State:
    def __init__(self, shape: Shape) -> None:
        self.shape = shape
        self.slots = threading.BoundedSemaphore(shape.slots) if shape.slots else None
        self.gate = threading.Lock()  # held by a prefill that stalls decode (planted)


def _prompt_words(body: dict[str, Any]) -> int:
    if isinstance(body.get("prompt"), str):
        return len(body["prompt"].split())
    messages = body.get("messages") or []
    return sum(len(str(m.get("content", "")).split()) for m in messages if isinstance(m, dict))


def _handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            body = b'{"status": "ok"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.loads(raw)
            chat = "chat" in self.path
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            if state.slots is not None:
                state.slots.acquire()
            try:
                self._generate(body, chat)
            except OSError:
                return
            finally:
                if state.slots is not None:
                    state.slots.release()

        def _event(self, payload: dict[str, Any]) -> None:
            self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
            self.wfile.flush()

        def _generate(self, body: dict[str, Any], chat: bool) -> None:
            shape = state.shape
            time.sleep(shape.first_token_s)
            prefill = _prompt_words(body) * shape.prefill_s_per_word
            if shape.stall and prefill > 0:
                with state.gate:
                    time.sleep(prefill)
            else:
                time.sleep(prefill)
            tokens = int(body.get("max_tokens") or 16)
            for i in range(tokens):
                if i:
                    time.sleep(shape.token_s)
                if shape.stall:
                    with state.gate:  # decode waits while a prefill holds the gate
                        pass
                last = i == tokens - 1
                piece = {"content": " w"} if chat else None
                choice: dict[str, Any] = {"index": 0, "finish_reason": "length" if last else None}
                choice.update({"delta": piece} if chat else {"text": " w"})
                self._event({"choices": [choice]})
            usage = {"prompt_tokens": _prompt_words(body), "completion_tokens": tokens}
            self._event({"choices": [], "usage": usage})
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextmanager
def shaped_server(shape: Shape) -> Iterator[str]:
    server = _Server(("127.0.0.1", 0), _handler(_State(shape)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
