"""What a selector chooses from: the embedded models, the local Hugging Face cache, and model
directories under given roots. Each candidate has the stable name a suite will know it by:
the embedded name (``zoo/llama``), the hub id (``org/name``) or the path under its root."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.models.catalog import embedded_models
from harness.spec.hub_cache import cached_models
from harness.spec.schema import ModelEntry, SelectSource

MAX_DEPTH = 2  # roots hold model directories, or org/name directories as the hub names them


@dataclass(frozen=True)
class Candidate:
    """A model that is (or would be, once prepared) on this machine."""

    name: str
    source: SelectSource
    path: Path
    backend: str | None = None  # the catalog's backend for embedded models; else the probe's
    tags: tuple[str, ...] = ()
    revision: str | None = None  # hub: the commit when the cache has no refs/main
    unavailable: str | None = None  # why it cannot be used as it is (not prepared, ...)

    def entry(self, backend: str, tags: Sequence[str]) -> ModelEntry:
        """The ordinary model entry this candidate expands to."""
        fields: dict[str, object] = {
            "backend": backend,
            "tags": list(dict.fromkeys([*tags, *self.tags])),
        }
        if self.source is SelectSource.EMBEDDED:
            fields["embedded"] = self.name
        elif self.source is SelectSource.HF_CACHE:
            fields.update(hub=self.name, revision=self.revision)
        else:
            fields.update(name=self.name, path=str(self.path))
        return ModelEntry.model_validate(fields)


def discover(
    sources: Iterable[SelectSource], roots: Sequence[Path], *, hub_cache: Path
) -> list[Candidate]:
    """Every candidate of ``sources``, in a stable order (source, then name)."""
    found: list[Candidate] = []
    for source in sources:
        if source is SelectSource.EMBEDDED:
            found.extend(embedded_candidates())
        elif source is SelectSource.HF_CACHE:
            found.extend(hub_candidates(hub_cache))
        else:
            for root in roots:
                found.extend(dir_candidates(root))
    return found


def embedded_candidates() -> list[Candidate]:

    return [
        Candidate(
            m.name,
            SelectSource.EMBEDDED,
            m.path,
            backend=m.backend,
            tags=m.tags,
            unavailable=None if m.prepared else "not prepared (mlx-harness models prepare)",
        )
        for m in embedded_models()
    ]


def hub_candidates(cache_dir: Path) -> list[Candidate]:

    return [
        Candidate(m.repo_id, SelectSource.HF_CACHE, m.snapshot, revision=m.revision)
        for m in cached_models(cache_dir)
    ]


def dir_candidates(root: Path) -> list[Candidate]:
    """Model directories (with a config.json) at or under ``root``, named by their path there."""
    if _is_model(root):
        return [Candidate(root.name, SelectSource.DIRS, root)]
    if not root.is_dir():
        return []  # reported by the expansion, at the root's line
    return [
        Candidate(path.relative_to(root).as_posix(), SelectSource.DIRS, path)
        for path in _model_dirs(root, MAX_DEPTH)
    ]


def _model_dirs(folder: Path, depth: int) -> list[Path]:
    found: list[Path] = []
    for child in sorted(folder.iterdir()):
        if not child.is_dir() or child.name.startswith("."):
            continue
        if _is_model(child):
            found.append(child)
        elif depth > 1:
            found.extend(_model_dirs(child, depth - 1))
    return found


def _is_model(path: Path) -> bool:
    return (path / "config.json").is_file()
