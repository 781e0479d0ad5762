"""Chart SVGs kept on disk between renders and processes, keyed by what draws them.

A chart is drawn from numbers and the harness's own labels only (:mod:`chart_svg`), so its SVG
is a function of the drawing call: the function, its arguments, the drawing code and
matplotlib's version. matplotlib takes 0.2-0.6 s of CPU a chart, most of a report's rendering:
a report rendered again (``mlx-harness report``, ``publish`` rebuilding the history site, a
second format, the same numbers under other names) reads its charts back instead, without
importing matplotlib.

- The key holds the call's ``repr`` (floats round-trip exactly), a hash of ``chart_svg.py``
  and matplotlib's version: a changed drawing code or matplotlib draws again.
- A file read back is checked against the same allowlist a drawn chart is
  (:func:`~harness.report.chart_svg.check_svg`); one that fails or does not read is drawn
  again and replaced. A cache that cannot be written is no cache: never a lost chart.
- Each of the 256 sub-folders keeps its :data:`PER_FOLDER` most recently used files (about
  4,000 charts, tens of MB): a nightly machine's cache does not grow without end.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import os
import tempfile
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path

from markupsafe import Markup

from harness.models.cache_dir import cache_root
from harness.report import chart_svg
from harness.report.chart_svg import UnsafeChart, check_svg

FOLDER = "report-charts"
PER_FOLDER = 16  # files kept in each of the 256 sub-folders (the key's first two hex digits)
DRAWERS = frozenset({chart_svg.xy_svg, chart_svg.strip_svg})


def drawn(draw: Callable[[], Markup], root: Path | None = None) -> Markup:
    """``draw()``'s SVG, read from the cache under ``root`` (default: the harness's cache
    folder) when an earlier call drew the same chart; drawn and stored otherwise."""
    key = _key(draw)
    if key is None:
        return draw()
    path = (root or cache_root()) / FOLDER / key[:2] / f"{key}.svg"
    kept = _read(path)
    if kept is not None:
        return kept
    svg = draw()
    _write(path, svg)
    return svg


def _key(draw: Callable[[], Markup]) -> str | None:
    """The cache key of a call of one of the chart drawers, else None (not cached)."""
    if not isinstance(draw, functools.partial) or draw.func not in DRAWERS:
        return None
    try:
        matplotlib = importlib.metadata.version("matplotlib")
        code = sha256(Path(chart_svg.__file__).read_bytes()).hexdigest()
    except (importlib.metadata.PackageNotFoundError, OSError):
        return None
    call = repr((draw.func.__name__, draw.args, sorted(draw.keywords.items())))
    return sha256(f"{matplotlib}\0{code}\0{call}".encode()).hexdigest()


def _read(path: Path) -> Markup | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        check_svg(text)
    except UnsafeChart:
        return None  # drawn again, and the file replaced
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: the last to be pruned
    return Markup(text)  # checked against the allowlist just above


def _write(path: Path, svg: Markup) -> None:
    """Store atomically (a reader never sees half a file), then prune the sub-folder."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, suffix=".part")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                out.write(str(svg))
            os.replace(temporary, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        _prune(path.parent)


def _prune(folder: Path) -> None:
    """Remove all but the :data:`PER_FOLDER` most recently used charts of ``folder``."""
    entries = []
    for entry in os.scandir(folder):
        with contextlib.suppress(OSError):
            entries.append((entry.stat().st_mtime, entry.path))
    for _, stale in sorted(entries, reverse=True)[PER_FOLDER:]:
        with contextlib.suppress(OSError):
            os.unlink(stale)
