"""The local Hugging Face cache: where it is (read from the environment each time, so HF_HOME and
HF_HUB_CACHE set after huggingface_hub was imported still count) and which models it holds.

Layout: ``<cache>/models--<org>--<name>/refs/<branch or tag>`` holds a commit hash, and
``snapshots/<commit>/`` the files of that commit (links into ``blobs/``, or plain files).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

REPO_PREFIX = "models--"
COMMIT = re.compile(r"^[0-9a-f]{40}$")


def hub_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The hub cache as huggingface_hub computes it: ``HF_HUB_CACHE``, the legacy
    ``HUGGINGFACE_HUB_CACHE``, ``$HF_HOME/hub``, ``$XDG_CACHE_HOME/huggingface/hub``, then
    ``~/.cache/huggingface/hub``."""
    env = os.environ if environ is None else environ
    explicit = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE")
    if explicit:
        return _expand(explicit, env)
    home = env.get("HF_HOME")
    if home:
        return _expand(home, env) / "hub"
    xdg = env.get("XDG_CACHE_HOME")
    base = _expand(xdg, env) if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def _expand(raw: str, env: Mapping[str, str]) -> Path:
    text = re.sub(r"\$(\w+)|\$\{(\w+)\}", lambda m: env.get(m[1] or m[2], m[0]), raw)
    return Path(text).expanduser()


def repo_id(folder_name: str) -> str | None:
    """``org/name`` (or ``name``) of a ``models--org--name`` folder; None for other folders."""
    if not folder_name.startswith(REPO_PREFIX):
        return None
    parts = folder_name.removeprefix(REPO_PREFIX).split("--")
    return "/".join(parts) if all(parts) else None


@dataclass(frozen=True)
class CachedModel:
    """One cached model repository, at the snapshot a plain ``hub:`` id resolves to."""

    repo_id: str
    snapshot: Path
    revision: str | None  # None: refs/main; else the commit hash of the only (or newest) snapshot


def cached_models(cache_dir: Path) -> list[CachedModel]:
    """Model repositories in ``cache_dir`` that have a snapshot, sorted by id."""
    if not cache_dir.is_dir():
        return []
    found = []
    for folder in sorted(cache_dir.iterdir()):
        name = repo_id(folder.name)
        if name is None or not folder.is_dir():
            continue
        located = _snapshot(folder)
        if located is not None:
            found.append(CachedModel(name, *located))
    return found


def cached_near(repo_id: str, cache_dir: Path) -> str | None:
    """The cached repository id closest to ``repo_id`` (a typo, another case), None when none
    is close: what a "did you mean" names."""
    import difflib

    ids = {m.repo_id.lower(): m.repo_id for m in cached_models(cache_dir)}
    close = difflib.get_close_matches(repo_id.lower(), list(ids), n=1, cutoff=0.75)
    return ids[close[0]] if close else None


def is_cached(repo_id: str, cache_dir: Path) -> bool:
    """Whether ``repo_id`` has a folder with a snapshot in the cache (any revision)."""
    folder = cache_dir / (REPO_PREFIX + repo_id.replace("/", "--"))
    return (folder / "snapshots").is_dir() and any((folder / "snapshots").iterdir())


def _snapshot(folder: Path) -> tuple[Path, str | None] | None:
    main = folder / "refs" / "main"
    if main.is_file():
        commit = main.read_text(encoding="utf-8").strip()
        snapshot = folder / "snapshots" / commit
        return (snapshot, None) if snapshot.is_dir() else None
    snapshots = folder / "snapshots"
    if not snapshots.is_dir():
        return None
    commits = [p for p in snapshots.iterdir() if p.is_dir() and COMMIT.match(p.name)]
    if not commits:
        return None
    newest = max(commits, key=lambda p: (p.stat().st_mtime, p.name))
    return newest, newest.name
