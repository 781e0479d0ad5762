"""Turn a suite's model entry into a local directory: path, embedded name, or hub id.

Hub ids resolve from the local Hugging Face cache (HF_HUB_CACHE, else HF_HOME/hub, read when
called and passed to huggingface_hub explicitly); the network is used only when downloads are
allowed by the suite or the command line (``allow_download``).
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.models.catalog import embedded_models, find_embedded
from harness.spec.hub_cache import hub_cache_dir
from harness.spec.schema import ModelEntry


class ResolveError(Exception):
    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def resolve_model(
    entry: ModelEntry,
    suite_dir: Path,
    *,
    allow_download: bool = False,
    hub_cache: Path | None = None,
) -> Path:
    """The local directory of ``entry``; ``hub_cache`` defaults to the environment's."""
    if entry.path:
        raw = os.path.expandvars(os.path.expanduser(entry.path))
        path = Path(raw)
        if not path.is_absolute():
            path = (suite_dir / path).resolve()
        if not path.is_dir():
            raise ResolveError(
                f"model path '{entry.path}' does not exist (resolved to {path})",
                "fix the path, or use 'embedded:' / 'hub:'",
            )
        return path
    if entry.embedded:
        model = find_embedded(entry.embedded)
        if model is None:
            import difflib

            names = [m.name for m in embedded_models()]
            close = difflib.get_close_matches(entry.embedded, names, n=1)
            hint = f"did you mean '{close[0]}'?" if close else "see `mlx-harness models list`"
            raise ResolveError(f"unknown embedded model '{entry.embedded}'", hint)
        if not model.prepared:
            raise ResolveError(
                f"embedded model '{entry.embedded}' is not prepared ({model.path})",
                "run `mlx-harness models prepare`",
            )
        return model.path
    if not entry.hub:
        raise ResolveError("a 'select:' entry has no single location", "expand the suite first")
    cache = hub_cache if hub_cache is not None else hub_cache_dir()
    return _resolve_hub(entry.hub, entry.revision, cache, allow_download=allow_download)


def _resolve_hub(repo_id: str, revision: str | None, cache: Path, *, allow_download: bool) -> Path:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    at = f" at revision '{revision}'" if revision else ""
    try:
        return Path(
            snapshot_download(
                repo_id,
                revision=revision,
                cache_dir=str(cache),
                local_files_only=not allow_download,
            )
        )
    except LocalEntryNotFoundError:
        raise ResolveError(
            f"hub model '{repo_id}'{at} is not in the local Hugging Face cache ({cache})",
            f"{_did_you_mean(repo_id, cache)}download it first (hf download {repo_id}), or set "
            "'allow_download: true' / pass --allow-download",
        ) from None
    except Exception as exc:  # hub client errors vary by version; keep them one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ResolveError(
            f"hub model '{repo_id}'{at} could not be resolved: {first}",
            f"{_did_you_mean(repo_id, cache)}check the id and revision",
        ) from None


def _did_you_mean(repo_id: str, cache: Path) -> str:
    """``did you mean 'org/name' (in the cache)? else `` when a cached id is close; else ""."""
    from harness.spec.hub_cache import cached_near

    near = cached_near(repo_id, cache)
    return f"did you mean '{near}' (in the cache)? else " if near and near != repo_id else ""
