"""Whose memory a served model has: the process found listening on a local URL's port (a real
HTTP server started here, found by the system table and process by process, as on macOS), and
for a remote host, nothing listening or the measuring process itself, n/a with the reason."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from harness.backends.base import MemoryUnavailable, ServerMemory
from harness.backends.http import ServedModel
from harness.backends.openai_client import Endpoint
from harness.backends.server_memory import (
    Reach,
    find_listener,
    host_and_port,
    listener_memory,
    listening_sockets,
    memory_note,
    per_process_sockets,
    reach,
)
from harness.backends.server_process import free_port

SERVER = """
import http.server, sys
server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[int, int]]:
    """(pid, port) of a tiny real HTTP server in its own process."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield proc.pid, port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_the_pid_listening_on_a_local_port_is_the_servers(
    server: tuple[int, int], host: str
) -> None:
    pid, port = server
    listener = find_listener(f"http://{host}:{port}/")
    assert listener.pids == (pid,) and listener.why_not is None
    memory = listener_memory(listener)
    assert isinstance(memory, ServerMemory)
    assert memory.pids == (pid,) and memory.rss_bytes > 0
    if sys.platform.startswith("linux"):
        assert memory.peak_bytes is not None and memory.peak_bytes >= memory.rss_bytes


def test_the_system_table_and_each_process_find_the_same_listener(
    server: tuple[int, int],
) -> None:
    """macOS refuses the system table without root: the fallback reads each process's own."""
    pid, port = server
    table, _ = listening_sockets(port)
    one_by_one, _ = per_process_sockets(port)
    assert {s.pid for s in table} == {s.pid for s in one_by_one} == {pid}


def test_a_served_url_model_measures_the_listener_not_the_worker(
    server: tuple[int, int],
) -> None:
    pid, port = server
    url = f"http://127.0.0.1:{port}"
    model = ServedModel(Endpoint(url), "url", None, listener=find_listener(url))
    memory = model.server_memory()
    assert isinstance(memory, ServerMemory) and memory.pids == (pid,)
    assert memory_note(memory).endswith(f"server pid {pid}")


# (name, url, self pid is the server's, fragment of the reason)
NOT_FOUND = [
    ("remote", "http://192.0.2.1:8080", False, "remote server (192.0.2.1)"),
    ("nothing_listens", "http://127.0.0.1:{free}", False, "no process on this machine listens"),
    ("inside_the_worker", "http://127.0.0.1:{port}", True, "inside the measuring process"),
]


@pytest.mark.parametrize(
    ("url", "is_self", "fragment"), [c[1:] for c in NOT_FOUND], ids=[c[0] for c in NOT_FOUND]
)
def test_no_listener_is_na_with_the_reason(
    server: tuple[int, int], url: str, is_self: bool, fragment: str
) -> None:
    pid, port = server
    target = url.format(free=free_port(), port=port)
    listener = find_listener(target, self_pid=pid if is_self else None)
    assert not listener.found and listener.why_not is not None
    assert fragment in listener.why_not
    memory = ServedModel(Endpoint(target), "url", None, listener=listener).server_memory()
    assert isinstance(memory, MemoryUnavailable)
    assert memory_note(memory) == f"n/a: {listener.why_not}"


# (addresses, this machine's addresses, where)
REACH = [
    (["127.0.0.1"], set(), Reach.LOCAL),
    (["::1"], set(), Reach.LOCAL),
    (["::ffff:127.0.0.1"], set(), Reach.LOCAL),
    (["0.0.0.0"], set(), Reach.LOCAL),
    (["10.1.2.3"], {"10.1.2.3"}, Reach.LOCAL),
    (["10.1.2.3"], {"10.1.2.4"}, Reach.REMOTE),
    (["192.0.2.1", "2001:db8::1"], set(), Reach.REMOTE),
    ([], set(), Reach.UNRESOLVED),
]


@pytest.mark.parametrize(("addresses", "here", "where"), REACH)
def test_reach(addresses: list[str], here: set[str], where: Reach) -> None:
    assert reach(addresses, frozenset(here)) is where


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8080/v1", ("127.0.0.1", 8080)),
        ("http://localhost", ("localhost", 80)),
        ("https://api.example.com", ("api.example.com", 443)),
        ("http://[::1]:9000", ("::1", 9000)),
    ],
)
def test_host_and_port(url: str, expected: tuple[str, int]) -> None:
    assert host_and_port(url) == expected


@pytest.mark.parametrize(
    ("memory", "note"),
    [
        (ServerMemory(100, 200, (7,)), "peak of server pid 7"),
        (ServerMemory(100, None, (7, 8)), "resident (no peak kept by this OS) of server pid 7, 8"),
        (MemoryUnavailable("remote server (h)"), "n/a: remote server (h)"),
        (None, "n/a: the server's process is not known"),
    ],
)
def test_memory_note(memory: ServerMemory | MemoryUnavailable | None, note: str) -> None:
    assert memory_note(memory) == note
