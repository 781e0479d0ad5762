"""A loopback HTTP server that records every connection made to it: the beacon a hostile
payload would call home to.

Connections are counted when accepted, before a request line is read, so a load the browser
started and dropped still counts; on exit the listen backlog is drained and counted too, so a
connection made just before the browser quit is never missed.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


@dataclass
class _Log:
    connections: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def _answer(self) -> None:
        with self.server.log.lock:
            self.server.log.requests.append(self.requestline)
        # 204: a navigation (meta refresh, a form) is dropped, so the page stays to be judged
        self.send_response(204)
        self.send_header("Cache-Control", "no-store")
        self.end_headers()

    do_GET = do_POST = do_HEAD = do_PUT = do_OPTIONS = _answer

    def log_message(self, format: str, *args: object) -> None:
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, log: _Log) -> None:
        self.log = log
        super().__init__(("127.0.0.1", 0), _Handler)

    def verify_request(self, request: object, client_address: object) -> bool:
        with self.log.lock:
            self.log.connections.append(str(client_address))
        return True


class BeaconServer:
    """Listens from creation (``url`` is known before anything is served); ``with beacon:``
    serves (again after each ``with``), and on leaving counts what is left in the backlog.
    ``close()`` when done."""

    def __init__(self) -> None:
        self._log = _Log()
        self._server = _Server(self._log)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        host, port = self._server.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        self.host_port = f"{host!s}:{port}"

    def __enter__(self) -> BeaconServer:
        # a thread of its own each time: one beacon serves several visits, one after another
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._thread.join()
        self._drain_backlog()

    def close(self) -> None:
        self._server.server_close()

    def _drain_backlog(self) -> None:
        listener = self._server.socket
        listener.setblocking(False)
        while True:
            try:
                conn, peer = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            with self._log.lock:
                self._log.connections.append(str(peer))
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    @property
    def requests(self) -> tuple[str, ...]:
        """The request lines read, in order (several per connection with keep-alive)."""
        with self._log.lock:
            return tuple(self._log.requests)

    @property
    def connections(self) -> int:
        with self._log.lock:
            return len(self._log.connections)

    def summary(self) -> str:
        """``N connection(s): GET /a, GET /b`` for a failure message."""
        shown = ", ".join(self.requests[:8]) or "no request line read"
        return f"{self.connections} connection(s): {shown}"
