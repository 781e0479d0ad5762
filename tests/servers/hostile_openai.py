"""A misbehaving OpenAI-compatible HTTP server, for testing that the harness cannot be fooled.

    python -m tests.servers.hostile_openai --port 0

prints ``READY http://127.0.0.1:PORT`` and serves until SIGTERM or SIGINT. Each way of
misbehaving is a :class:`Mode`, chosen by the URL: a suite's ``url:`` (or a client's base URL)
of ``http://127.0.0.1:PORT/m/<mode>`` gets that mode on its completion endpoints, while
``/health`` and ``/v1/models`` (one model, ``hostile``) answer well, so the model loads.
``Mode.WELL`` is a server that keeps its contracts, as the control.

The modes answer a completion request (``POST .../v1/chat/completions`` or
``.../v1/completions``), streamed or not:

- html: a 200 with an HTML page (a captive portal, a proxy's login);
- cut_json: a 200 whose JSON (or whose last event) is cut in the middle;
- sse_garbage: events whose data is not JSON; a non-streamed body that is not JSON;
- no_end: a stream of three chunks that ends with neither ``[DONE]`` nor a finish_reason;
- endless: a token every 50 ms forever (non-streamed, and on ``/v1/audio/*``: a byte of
  whitespace every 50 ms);
- slow_headers: nothing at all (not even the status line) for ``slow_s`` seconds;
- huge: one delta of ``huge_bytes`` bytes (default 20 MiB, over the harness's 16 MiB cap);
- bad_utf8: bytes that are not UTF-8 inside the text;
- hostile_text: answers whose text carries ESC sequences, bidi overrides, NUL, C1; the streamed
  one has a word more, so a stream-vs-whole check fails and shows both in its evidence;
- wrong_schema: JSON without ``choices`` (``{"result": ...}``), streamed and not;
- error_500: a 500 with the server's own message;
- redirect: a 307 to another address;
- reset: the connection closed with a TCP reset before any answer;
- chat_only: ``/v1/completions`` is a 404 (a chat-only server); chat answers well;
- rejects_sampling: a 400 for ``top_p``, ``min_p`` or ``top_k`` ("unsupported"); else well;
- logprobs_blanked: a batch as mlx-lm 0.30.5-0.31.1 formats it (#1072): a stream, once its first
  event is out, waits for ``joiners`` requests to arrive; the non-streamed ones wait for it to
  end, and when a plain request (no logprobs) came among them, the others' logprobs entries are
  blank (``{}``, as mlx-lm formats a count of -1);
- logprobs_hang: a request asking logprobs is never answered, nor is any request after it (mlx-lm
  0.30.4's generation thread died on a NameError, #800).

Every well-behaved answer to a request asking ``logprobs`` (and ``top_logprobs: k``) carries
``choices[0].logprobs.content``: one entry per word (its token, a logprob and k alternatives).
The two logprobs modes are not in the hostile run of every mode (a stream there waits for
requests that never come): :data:`LOGPROBS_MODES`.
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import Enum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.servers.serve_until_stopped import serve_until_stopped

MODEL_ID = "hostile"
ANSWER = "The keeper found a bottle on the rocks and read the note twice before dawn."
HOSTILE_TEXT = (
    "red \x1b[31mALERT\x1b[0m \x1b]8;;http://evil.example\x07click\x1b]8;;\x07 "
    "\u202eevil\u202c \u2066iso\u2069 nul\x00 csi\x9b2J line\u2028sep"
)
HTML_PAGE = "<!DOCTYPE html>\n<html><body><h1>Sign in to the Wi-Fi</h1></body></html>\n"
REDIRECT_TO = "http://127.0.0.1:9/v1/chat/completions"
SAMPLERS = ("top_p", "min_p", "top_k")


class Mode(str, Enum):
    WELL = "well"
    HTML = "html"
    CUT_JSON = "cut_json"
    SSE_GARBAGE = "sse_garbage"
    NO_END = "no_end"
    ENDLESS = "endless"
    SLOW_HEADERS = "slow_headers"
    HUGE = "huge"
    BAD_UTF8 = "bad_utf8"
    HOSTILE_TEXT = "hostile_text"
    WRONG_SCHEMA = "wrong_schema"
    ERROR_500 = "error_500"
    REDIRECT = "redirect"
    RESET = "reset"
    CHAT_ONLY = "chat_only"
    REJECTS_SAMPLING = "rejects_sampling"
    LOGPROBS_BLANKED = "logprobs_blanked"
    LOGPROBS_HANG = "logprobs_hang"


LOGPROBS_MODES = frozenset({Mode.LOGPROBS_BLANKED, Mode.LOGPROBS_HANG})
JOIN_WAIT_S = 30.0  # a safety net only: a batch's stream waits this long at most for joiners


class HostileServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        *,
        slow_s: float = 30.0,
        huge_bytes: int = 20 * 2**20,
        tick_s: float = 0.05,
        joiners: int = 3,
    ) -> None:
        super().__init__(address, Handler)
        self.slow_s = slow_s
        self.huge_bytes = huge_bytes
        self.tick_s = tick_s
        self.stopping = threading.Event()
        self.batch = Batch(joiners)
        self.dead = threading.Event()  # logprobs_hang: the generation thread died

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a client that leaves mid-answer is what these modes are for (and a test
        reading the terminal must see only the harness's own lines)."""
        return

    def mode_url(self, mode: Mode) -> str:
        """The base URL (no ``/v1``) whose completion endpoints misbehave as ``mode``."""
        return f"{self.url}/m/{mode.value}"


class Batch:
    """logprobs_blanked's batch: streams under way, the requests that arrived since the last
    one began, and whether a plain one came among them."""

    def __init__(self, joiners: int) -> None:
        self.joiners = joiners
        self.changed = threading.Condition()
        self.streams = 0
        self.arrivals = 0
        self.plain_joined = False

    def start_stream(self) -> int:
        with self.changed:
            self.streams += 1
            self.plain_joined = False
            return self.arrivals

    def wait_for_joiners(self, since: int, stopping: threading.Event) -> None:
        with self.changed:
            self.changed.wait_for(
                lambda: stopping.is_set() or self.arrivals - since >= self.joiners, JOIN_WAIT_S
            )

    def end_stream(self) -> None:
        with self.changed:
            self.streams -= 1
            self.changed.notify_all()

    def join(self, plain: bool, stopping: threading.Event) -> bool:
        """A non-streamed request arrives and waits for the batch's streams to end; True when
        its logprobs come out blank (a plain request joined the batch too)."""
        with self.changed:
            self.arrivals += 1
            batched = self.streams > 0
            if plain and batched:
                self.plain_joined = True
            self.changed.notify_all()
            self.changed.wait_for(lambda: stopping.is_set() or self.streams == 0, JOIN_WAIT_S)
            return batched and self.plain_joined


def _top(request: dict[str, Any]) -> int | None:
    """The count of alternatives a request asks per token (0: logprobs alone), None: none."""
    if not request.get("logprobs"):
        return None
    top = request.get("top_logprobs")
    return top if isinstance(top, int) and not isinstance(top, bool) else 0


def _logprobs(text: str, top: int, blank: bool) -> dict[str, Any]:
    """``choices[0].logprobs`` for ``text``: an entry per word, or ``{}`` each when ``blank``."""
    entries: list[dict[str, Any]] = []
    for word in _words(text):
        alternatives = [
            {"token": word if k == 0 else f"alt{k}", "logprob": -0.5 - k} for k in range(top)
        ]
        entries.append(
            {} if blank else {"token": word, "logprob": -0.5, "top_logprobs": alternatives}
        )
    return {"content": entries}


def _for_prompt(text: str, request: dict[str, Any]) -> str:
    """``text`` ending with a mark of the request's prompt: a well-behaved answer depends on its
    prompt (a check comparing answers cannot judge one that does not), the same prompt giving
    the same mark."""
    import hashlib
    import json

    asked = request.get("messages", request.get("prompt"))
    mark = hashlib.sha256(json.dumps(asked, sort_keys=True, default=str).encode()).hexdigest()
    return f"{text} ({mark[:8]})"


def _words(text: str) -> list[str]:
    parts = text.split(" ")
    return [p + (" " if i < len(parts) - 1 else "") for i, p in enumerate(parts)]


def _chunk(chat: bool, text: str, finish: str | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
    if chat:
        choice["delta"] = {"content": text} if text else {}
    else:
        choice["text"] = text
    kind = "chat.completion.chunk" if chat else "text_completion"
    return {"id": "hostile-1", "object": kind, "model": MODEL_ID, "choices": [choice]}


def _whole(chat: bool, text: str, top: int | None = None, *, blank: bool = False) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": "length"}
    if top is not None:
        choice["logprobs"] = _logprobs(text, top, blank)
    if chat:
        choice["message"] = {"role": "assistant", "content": text}
    else:
        choice["text"] = text
    words = len(text.split())
    return {
        "id": "hostile-1",
        "object": "chat.completion" if chat else "text_completion",
        "model": MODEL_ID,
        "choices": [choice],
        "usage": {"prompt_tokens": 12, "completion_tokens": words, "total_tokens": 12 + words},
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HostileServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    # -- routing ---------------------------------------------------------------------------

    def _route(self) -> tuple[Mode, str] | None:
        """The mode the path names and the path after it (``/v1/...``)."""
        parts = self.path.split("/", 3)  # "", "m", mode, rest
        if len(parts) < 4 or parts[1] != "m":
            return None
        try:
            return Mode(parts[2]), "/" + parts[3]
        except ValueError:
            return None

    def _send(self, status: int, body: bytes, content_type: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, body: Any) -> None:
        self._send(status, json.dumps(body).encode(), "application/json")

    def do_GET(self) -> None:
        route = self._route()
        rest = route[1] if route else self.path
        if rest == "/health":
            self._json(200, {"status": "ok"})
        elif rest == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]})
        else:
            self._json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        route = self._route()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if route is not None and route[1].startswith("/v1/audio/") and route[0] is Mode.ENDLESS:
            self._bad_whole(Mode.ENDLESS, chat=False)  # the speech endpoints: same trickle
            return
        if route is None or route[1] not in ("/v1/chat/completions", "/v1/completions"):
            self._json(404, {"detail": "Not Found"})
            return
        mode, rest = route
        chat = rest == "/v1/chat/completions"
        try:
            request = json.loads(raw)
        except ValueError:
            self._json(400, {"error": {"message": "malformed JSON", "type": "invalid_request"}})
            return
        streamed = bool(request.get("stream")) if isinstance(request, dict) else False
        try:
            self._answer(mode, chat, streamed, request if isinstance(request, dict) else {})
        except OSError:  # the client left: nothing more to say
            self.close_connection = True

    # -- answers ---------------------------------------------------------------------------

    def _answer(self, mode: Mode, chat: bool, streamed: bool, request: dict[str, Any]) -> None:
        if mode is Mode.CHAT_ONLY and not chat:
            self._json(404, {"detail": "Not Found"})
        elif mode is Mode.REJECTS_SAMPLING and any(k in request for k in SAMPLERS):
            used = next(k for k in SAMPLERS if k in request)
            message = f"unsupported parameter: {used}"
            self._json(400, {"error": {"message": message, "type": "invalid_request_error"}})
        elif mode is Mode.LOGPROBS_HANG and (
            self.server.dead.is_set() or _top(request) is not None
        ):
            self.server.dead.set()
            self.server.stopping.wait()
        elif mode is Mode.LOGPROBS_BLANKED:
            self._batched(chat, streamed, request)
        elif mode in (Mode.WELL, Mode.CHAT_ONLY, Mode.REJECTS_SAMPLING, Mode.LOGPROBS_HANG):
            self._good(chat, streamed, _for_prompt(ANSWER, request), _top(request))
        elif mode is Mode.HOSTILE_TEXT:
            text = _for_prompt(HOSTILE_TEXT, request)
            self._good(chat, streamed, text + (" streamed" if streamed else ""))
        elif mode is Mode.HTML:
            self._send(200, HTML_PAGE.encode(), "text/html; charset=utf-8")
        elif mode is Mode.ERROR_500:
            message = "CUDA error: out of memory (simulated)"
            self._json(500, {"error": {"message": message, "type": "server_error"}})
        elif mode is Mode.REDIRECT:
            self._send(307, b"", "text/plain", Location=REDIRECT_TO)
        elif mode is Mode.RESET:
            self._reset()
        elif mode is Mode.SLOW_HEADERS:
            self.server.stopping.wait(self.server.slow_s)
            self._good(chat, streamed, _for_prompt(ANSWER, request))
        elif streamed:
            self._bad_stream(mode, chat)
        else:
            self._bad_whole(mode, chat)

    def _good(self, chat: bool, streamed: bool, text: str, top: int | None = None) -> None:
        if not streamed:
            self._json(200, _whole(chat, text, top))
            return
        self._open_stream()
        for word in _words(text):
            self._event(_chunk(chat, word))
        self._stream_end(chat)

    def _batched(self, chat: bool, streamed: bool, request: dict[str, Any]) -> None:
        text, top, batch = _for_prompt(ANSWER, request), _top(request), self.server.batch
        if not streamed:
            blank = batch.join(top is None, self.server.stopping)
            self._json(200, _whole(chat, text, top, blank=blank))
            return
        since = batch.start_stream()
        try:
            self._open_stream()
            first, *rest = _words(text)
            self._event(_chunk(chat, first))
            batch.wait_for_joiners(since, self.server.stopping)
            for word in rest:
                self._event(_chunk(chat, word))
            self._stream_end(chat)
        finally:
            batch.end_stream()

    def _stream_end(self, chat: bool) -> None:
        self._event(_chunk(chat, "", "length"))
        self._event({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 14}})
        self._raw(b"data: [DONE]\n\n")

    def _open_stream(self) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

    def _raw(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()

    def _event(self, event: Any) -> None:
        self._raw(f"data: {json.dumps(event)}\n\n".encode())

    def _reset(self) -> None:
        """Close the connection with a TCP RST (SO_LINGER 0), answering nothing."""
        self.close_connection = True
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    def _bad_stream(self, mode: Mode, chat: bool) -> None:
        self._open_stream()
        if mode is Mode.CUT_JSON:
            self._event(_chunk(chat, "The "))
            self._raw(b'data: {"id": "hostile-1", "choices": [{"index": 0, "delta": {"cont')
        elif mode is Mode.SSE_GARBAGE:
            self._raw(b"data: <<garbage>> not json\n\n")
        elif mode is Mode.NO_END:
            for word in ("The ", "keeper ", "found "):
                self._event(_chunk(chat, word))
        elif mode is Mode.ENDLESS:
            while not self.server.stopping.is_set():
                self._event(_chunk(chat, "more "))
                time.sleep(self.server.tick_s)
        elif mode is Mode.HUGE:
            self._event(_chunk(chat, "x" * self.server.huge_bytes))
        elif mode is Mode.BAD_UTF8:
            self._event(_chunk(chat, "The "))
            bad = b'{"choices": [{"index": 0, "delta": {"content": "bad \xff\xfe"}}]}'
            self._raw(b"data: " + bad + b"\n\n")
        elif mode is Mode.WRONG_SCHEMA:
            self._event({"text": "The keeper", "done": False})
            self._raw(b"data: [DONE]\n\n")

    def _bad_whole(self, mode: Mode, chat: bool) -> None:
        if mode is Mode.CUT_JSON:
            body = json.dumps(_whole(chat, ANSWER)).encode()
            self._send(200, body[: len(body) // 2], "application/json")
        elif mode is Mode.SSE_GARBAGE:
            self._send(200, b"<<garbage>> not json", "application/json")
        elif mode is Mode.NO_END:
            self._json(200, _whole(chat, ANSWER))
        elif mode is Mode.ENDLESS:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.close_connection = True
            while not self.server.stopping.is_set():
                self._raw(b" ")
                time.sleep(self.server.tick_s)
        elif mode is Mode.HUGE:
            self._json(200, _whole(chat, "x" * self.server.huge_bytes))
        elif mode is Mode.BAD_UTF8:
            body = json.dumps(_whole(chat, "bad XX")).encode().replace(b"XX", b"\xff\xfe")
            self._send(200, body, "application/json")
        elif mode is Mode.WRONG_SCHEMA:
            self._json(200, {"result": "The keeper found a bottle."})


def make_server(host: str = "127.0.0.1", port: int = 0, **options: Any) -> HostileServer:
    """A listening server (not yet serving: call ``serve_forever``, e.g. in a thread)."""
    return HostileServer((host, port), **options)


@contextmanager
def hostile_server(**options: Any) -> Iterator[HostileServer]:
    """A hostile server serving from a thread of this process, stopped when the block ends
    (the endless and slow modes stop with it)."""
    server = make_server(**options)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.servers.hostile_openai")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port (printed)")
    parser.add_argument("--slow-s", type=float, default=30.0)
    parser.add_argument("--huge-bytes", type=int, default=20 * 2**20)
    args = parser.parse_args(argv)
    server = make_server(args.host, args.port, slow_s=args.slow_s, huge_bytes=args.huge_bytes)
    return serve_until_stopped(server, server.url, server.stopping.set)


if __name__ == "__main__":
    sys.exit(main())
