"""A second server of the same files as a started one, without its draft model: the baseline
of a drafted server whose engine cannot turn its draft off per request (llama-server), and,
with ``extra_args``, the cache-less reference of a server whose engine cannot skip its prompt
cache per request (mlx_lm.server with ``--prompt-cache-size 0``).

It is started from what the first server's load recorded (``server_engine``, ``served_file``,
``server_args``, ``server_log``; not the suite's ``env:``, whose values the record keeps out),
on a free loopback port, its log beside the first's, and stopped when the block ends."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.backends.base import BackendError
from harness.backends.openai_client import Endpoint
from harness.backends.server_engines import ServerEngine, launch
from harness.backends.server_process import ServerProcess, free_port


def twin_problem(details: Mapping[str, Any]) -> str | None:
    """Why no twin can be started from these load details (None: one can)."""
    for key in ("server_engine", "served_file", "server_log"):
        if not isinstance(details.get(key), str):
            return f"the load recorded no {key}: only a server the harness started has a twin"
    return None


@contextmanager
def undrafted_twin(
    details: Mapping[str, Any], timeout_s: float = 300.0, extra_args: Sequence[str] = ()
) -> Iterator[Endpoint]:
    """The endpoint of the twin (the first's ``args`` then ``extra_args``), healthy;
    :class:`BackendError` when it cannot start."""
    problem = twin_problem(details)
    if problem is not None:
        raise BackendError(problem)
    engine = ServerEngine(str(details["server_engine"]))
    log_dir = Path(str(details["server_log"])).parent
    args = [str(a) for a in details.get("server_args") or ()] + list(extra_args)
    port = free_port()
    launched = launch(
        engine,
        Path(str(details["served_file"])),
        port,
        args,
        log_dir / "server-state",
    )
    process = ServerProcess(launched.command, log_dir / f"server-{engine.value}-{port}-twin.log")
    try:
        process.wait_healthy(timeout_s)
        yield Endpoint(f"http://127.0.0.1:{port}", model=launched.request_model)
    finally:
        process.stop()
