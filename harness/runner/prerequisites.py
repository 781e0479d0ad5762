"""What a case needs on the machine before its worker starts, made when the first case needs it.

Today one thing: llama.cpp's ``llama-server``. ``make test`` builds it (``make llama-server``);
a user who only ran ``make demo`` has none, and the first case served by it builds it into the
cache (a few minutes, once) instead of failing. The build runs in the harness's own process,
before the case's worker starts and outside the case's timeout; a line says it started, a line
per build step, and a line how long it took. Its seconds are the set-up's, not the case's: the
run leaves them out of the case's duration, so they never read as harness overhead. A build
that fails is the case's load error, one line naming the step and the log.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from harness.core.types import ModelRef

LLAMA_SERVER_ENGINE = "llama_server"


@dataclass(frozen=True)
class Prepared:
    """What making a prerequisite took: its seconds, and why it could not be made (None: ready)."""

    seconds: float = 0.0
    problem: str | None = None


def needs_llama_server(model: ModelRef) -> bool:
    """The harness starts this model's server, and that server is llama.cpp's llama-server."""
    return model.server is not None and model.server.engine == LLAMA_SERVER_ENGINE


def ensure_llama_server(say: Callable[[str], None]) -> Prepared:
    """The llama-server the backend will find (``$MLX_HARNESS_LLAMA_SERVER``, the cached build,
    ``PATH``), built into the cache first when there is none."""
    from harness.models.llama_server import (
        LlamaServerError,
        build,
        find_llama_server,
        read_build_info,
    )

    try:
        if find_llama_server() is not None:
            return Prepared()
    except LlamaServerError as exc:  # $MLX_HARNESS_LLAMA_SERVER names no executable
        return Prepared(problem=str(exc))
    say(
        "llama-server: not built yet; a case is served by it, so building llama.cpp's "
        "llama-server into the cache now (a few minutes, once; `make llama-server` does it ahead)"
    )
    start = time.perf_counter()
    try:
        path = build(on_step=lambda step: say(f"llama.cpp: {step}"))
    except LlamaServerError as exc:
        seconds = time.perf_counter() - start
        return Prepared(seconds, f"llama-server could not be built: {exc}")
    seconds = time.perf_counter() - start
    info = read_build_info()
    built = f"; {info.version_output}" if info is not None and info.version_output else ""
    say(f"llama-server: built in {seconds:.0f} s ({path}{built})")
    return Prepared(seconds)
