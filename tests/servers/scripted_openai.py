"""An OpenAI-compatible server whose answers a test scripts, in a thread of the test's process.

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        return 200, {"choices": [...], "usage": {...}}

    with scripted_server(answer) as url:
        ...  # http://127.0.0.1:PORT

Each request gets ``answer(method, path, parsed JSON body or None)`` back as JSON with its
status (a list: a stream of those events, then ``[DONE]``): enough to plant one misbehaviour
(a truncated count, a context shift, a draft that changes the text) where a real engine does
not show it."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[str, str, Any], tuple[int, Any]]


def _handler(answer: Answer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _reply(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            status, out = answer(method, self.path, body)
            if isinstance(out, list):  # a stream: each item one event, then [DONE]
                self._events(status, out)
                return
            data = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _events(self, status: int, events: list[Any]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for event in [*(json.dumps(e) for e in events), "[DONE]"]:
                self.wfile.write(f"data: {event}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

        def do_GET(self) -> None:
            self._reply("GET")

        def do_POST(self) -> None:
            self._reply("POST")

    return Handler


@contextmanager
def scripted_server(answer: Answer) -> Iterator[str]:
    """The base URL of a server answering with ``answer``, stopped when the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(answer))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def completion(text: str, prompt_tokens: int, completion_tokens: int, **extra: Any) -> Any:
    """A non-streamed ``/v1/completions`` answer with its usage (``extra``: more top-level
    fields, e.g. llama-server's ``timings``)."""
    return {
        "object": "text_completion",
        "choices": [{"index": 0, "text": text, "finish_reason": "length"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
        **extra,
    }


def stream_chunks(pieces: list[str], usage: Any = None, **extra: Any) -> list[Any]:
    """The events of a streamed ``/v1/completions`` answer: one per piece of text, the last
    with ``finish_reason``, then one with ``usage`` and ``extra`` (llama-server's ``timings``)."""
    events: list[Any] = [
        {"choices": [{"index": 0, "text": piece, "finish_reason": None}]} for piece in pieces
    ]
    events.append({"choices": [{"index": 0, "text": "", "finish_reason": "length"}]})
    events.append({"choices": [], "usage": usage or {}, **extra})
    return events
