"""Serve a test server from its own process until SIGTERM or SIGINT, announcing its URL.

Prints ``READY <url>`` once it listens (what :mod:`tests.servers.planted_process` waits for),
serves, and on either signal runs ``on_stop`` (e.g. waking the endless modes) and shuts down.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from socketserver import BaseServer


def serve_until_stopped(
    server: BaseServer, url: str, on_stop: Callable[[], None] | None = None
) -> int:
    def stop(signum: int, frame: object) -> None:
        if on_stop is not None:
            on_stop()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"READY {url}", flush=True)
    try:
        server.serve_forever(poll_interval=0.05)
    finally:
        server.server_close()
    return 0
