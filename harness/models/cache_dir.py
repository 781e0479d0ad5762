"""Where prepared models live: one cache directory the user can choose."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "MLX_HARNESS_CACHE"


def cache_root() -> Path:
    """Root of the harness cache (``$MLX_HARNESS_CACHE``, else ``$XDG_CACHE_HOME/mlx-harness``)."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "mlx-harness"


def models_dir() -> Path:
    """Directory holding one sub-directory per prepared embedded model."""
    return cache_root() / "models"


def downloads_dir() -> Path:
    """Directory holding downloaded source artefacts (wheels, GGUF files) before conversion."""
    return cache_root() / "downloads"


def swap_in(building: Path, final: Path) -> None:
    """Replace ``final`` by ``building``; an old copy is moved aside first, then removed."""
    import shutil
    import tempfile

    old: Path | None = None
    if final.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{final.name}.old-", dir=final.parent))
        os.replace(final, old / final.name)
    os.replace(building, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
