"""The memory of the process that serves a model: the one the harness started (by its pid), or
the one found listening on a ``url:``'s TCP port when that host is this machine.

A ``url:`` host is this machine when it resolves to a loopback address or to one of this
machine's interface addresses. The listening process is found in the system's TCP table
(``psutil.net_connections``); where that needs root (macOS), process by process
(``Process.net_connections``), skipping what this user may not read. Each step that fails says
why in one line (:class:`MemoryUnavailable`): a remote host, nothing listening, a listener this
user may not see, a port forwarded by ssh or docker (the server's memory is elsewhere), the
server running inside the measuring process itself. The worker's own memory is never given
for a server's.

Resident memory now (RSS) is read for every process; its peak where the OS keeps one (Linux:
``VmHWM`` in ``/proc/<pid>/status``; macOS: none, so RSS after the runs stands for it).
Several processes listening on one port (pre-forked workers sharing a socket) are summed.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from urllib.parse import urlsplit

from harness.backends.base import MemoryUnavailable, ServerMemory
from harness.backends.proc_status import vm_hwm_bytes

# processes that listen on a port to forward it: the server behind them is not them
FORWARDERS = frozenset(
    {
        "ssh",
        "sshd",
        "docker-proxy",
        "com.docker.backend",
        "vpnkit",
        "kubectl",
        "socat",
        "rootlessport",
    }
)
WILDCARDS = frozenset({"0.0.0.0", "::", ""})


class Reach(str, Enum):
    """Where a URL's host is, seen from here."""

    LOCAL = "local"  # loopback or one of this machine's addresses
    REMOTE = "remote"
    UNRESOLVED = "unresolved"  # the name does not resolve


@dataclass(frozen=True)
class Listener:
    """The local process(es) listening on a URL's port (``pids``), or why none was found."""

    host: str
    port: int
    pids: tuple[int, ...] = ()
    why_not: str | None = None

    @property
    def found(self) -> bool:
        return bool(self.pids)


def host_and_port(url: str) -> tuple[str, int]:
    """``http://127.0.0.1:8080/x`` -> ("127.0.0.1", 8080); the scheme's port when none is given."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname or "", port


def _plain(address: str) -> str:
    return address.split("%", 1)[0]  # fe80::1%eth0 -> fe80::1


def local_addresses() -> frozenset[str]:
    """Every address of this machine's interfaces (IPv4 and IPv6, scope ids stripped)."""
    import psutil

    found = set()
    for addresses in psutil.net_if_addrs().values():
        for address in addresses:
            if address.family in (socket.AF_INET, socket.AF_INET6):
                found.add(_plain(address.address))
    return frozenset(found)


def resolve(host: str, port: int) -> frozenset[str]:
    """The addresses ``host`` resolves to (empty when it does not)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError):
        return frozenset()
    return frozenset(_plain(str(info[4][0])) for info in infos)


def reach(addresses: Iterable[str], here: frozenset[str]) -> Reach:
    """LOCAL when any of ``addresses`` is loopback, unspecified or in ``here``."""
    listed = list(addresses)
    if not listed:
        return Reach.UNRESOLVED
    for address in listed:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            continue
        if ip.is_loopback or ip.is_unspecified or address in here:
            return Reach.LOCAL
        mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:127.0.0.1
        if mapped is not None and (mapped.is_loopback or str(mapped) in here):
            return Reach.LOCAL
    return Reach.REMOTE


@dataclass(frozen=True)
class Socket:
    """One listening TCP socket: its address, port and owner (None: this user may not see it)."""

    ip: str
    port: int
    pid: int | None


def listening_sockets(port: int) -> tuple[list[Socket], str | None]:
    """The sockets listening on ``port``, and a note when some processes could not be read.

    The system table first; where that is refused (macOS without root), each process's own."""
    import psutil

    try:
        table = psutil.net_connections(kind="tcp")
    except (psutil.AccessDenied, PermissionError):
        return per_process_sockets(port)
    return [
        Socket(_plain(c.laddr.ip), c.laddr.port, c.pid)
        for c in table
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port
    ], None


def per_process_sockets(port: int) -> tuple[list[Socket], str | None]:
    """:func:`listening_sockets` read process by process (what macOS allows without root),
    with a note of how many processes this user could not read."""
    import psutil

    found: list[Socket] = []
    denied = 0
    for proc in psutil.process_iter():
        try:
            connections = proc.net_connections(kind="tcp")
        except (psutil.AccessDenied, PermissionError):
            denied += 1
            continue
        except psutil.Error:  # gone or a zombie
            continue
        found.extend(
            Socket(_plain(c.laddr.ip), c.laddr.port, proc.pid)
            for c in connections
            if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port
        )
    note = f"{denied} processes of other users could not be read" if denied else None
    return found, note


def _matching(sockets: Iterable[Socket], addresses: frozenset[str]) -> Iterator[Socket]:
    """The sockets a client connecting to ``addresses`` reaches: an exact address first, else
    a wildcard (0.0.0.0, ::) one."""
    listed = list(sockets)
    exact = [s for s in listed if s.ip in addresses]
    yield from exact or [s for s in listed if s.ip in WILDCARDS]


def find_listener(url: str, *, self_pid: int | None = None) -> Listener:
    """The process(es) serving ``url`` on this machine, or why they cannot be named."""
    host, port = host_and_port(url)
    addresses = resolve(host, port)
    where = reach(addresses, local_addresses() if addresses else frozenset())
    if where is Reach.UNRESOLVED:
        return Listener(host, port, why_not=f"host {host!r} does not resolve on this machine")
    if where is Reach.REMOTE:
        return Listener(
            host,
            port,
            why_not=f"remote server ({host}): its memory cannot be measured from this machine",
        )
    sockets, note = listening_sockets(port)
    chosen = list(_matching(sockets, addresses))
    pids = tuple(sorted({s.pid for s in chosen if s.pid is not None}))
    if not chosen:
        why = f"no process on this machine listens on {host}:{port}"
        return Listener(host, port, why_not=why + (f" ({note})" if note else ""))
    if not pids:
        return Listener(
            host,
            port,
            why_not=f"a process listens on port {port} but this user may not see which (run "
            "as its user or root)",
        )
    me = os.getpid() if self_pid is None else self_pid
    if me in pids:
        return Listener(host, port, why_not="the server runs inside the measuring process itself")
    forwarder = _forwarder(pids)
    if forwarder is not None:
        return Listener(
            host,
            port,
            why_not=f"port {port} is forwarded by {forwarder}: the server's memory is elsewhere",
        )
    return Listener(host, port, pids)


def _forwarder(pids: Iterable[int]) -> str | None:
    import psutil

    for pid in pids:
        try:
            name = psutil.Process(pid).name()
        except psutil.Error:
            continue
        if name in FORWARDERS:
            return f"{name} (pid {pid})"
    return None


def process_memory(pid: int) -> ServerMemory | MemoryUnavailable:
    """RSS of ``pid`` now and, on Linux, its peak (``VmHWM``)."""
    import psutil

    try:
        rss = int(psutil.Process(pid).memory_info().rss)
    except psutil.NoSuchProcess:
        return MemoryUnavailable(f"the server process (pid {pid}) has exited")
    except psutil.Error as exc:
        return MemoryUnavailable(f"the server process (pid {pid}) may not be read: {exc}")
    return ServerMemory(rss, _peak(pid), (pid,))


def _peak(pid: int) -> int | None:
    return vm_hwm_bytes(Path(f"/proc/{pid}/status"))


def memory_of(pids: Iterable[int]) -> ServerMemory | MemoryUnavailable:
    """The memory of the processes ``pids`` together (RSS summed; the peak summed when every
    process has one: an upper bound, their peaks need not coincide)."""
    readings = [process_memory(pid) for pid in pids]
    for reading in readings:
        if isinstance(reading, MemoryUnavailable):
            return reading
    measured = [r for r in readings if isinstance(r, ServerMemory)]
    if not measured:
        return MemoryUnavailable("no server process to measure")
    peaks = [r.peak_bytes for r in measured]
    peak = sum(p for p in peaks if p is not None) if all(p is not None for p in peaks) else None
    pids_all = tuple(pid for r in measured for pid in r.pids)
    return ServerMemory(sum(r.rss_bytes for r in measured), peak, pids_all)


def listener_memory(listener: Listener) -> ServerMemory | MemoryUnavailable:
    """The memory of what ``listener`` found, or why there is none."""
    if not listener.found:
        return MemoryUnavailable(listener.why_not or "no server process found")
    return memory_of(listener.pids)


def memory_note(memory: ServerMemory | MemoryUnavailable | None) -> str:
    """``peak of server pid 123`` / ``n/a: <reason>``: what a memory figure is, or why none."""
    if isinstance(memory, ServerMemory):
        view = "peak" if memory.peak_bytes else "resident (no peak kept by this OS)"
        pids = ", ".join(str(p) for p in memory.pids) or "?"
        return f"{view} of server pid {pids}"
    if isinstance(memory, MemoryUnavailable):
        return f"n/a: {memory.reason}"
    return "n/a: the server's process is not known"
