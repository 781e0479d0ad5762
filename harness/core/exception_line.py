"""An exception as the one line a person reads: ``Type: first line of its message``."""

from __future__ import annotations


def exception_line(exc: BaseException, limit: int | None = None) -> str:
    """``Type: first non-empty line`` (cut to ``limit`` characters), or ``Type`` alone."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    first = lines[0] if limit is None or len(lines[0]) <= limit else lines[0][: limit - 1] + "…"
    return f"{type(exc).__name__}: {first}"
