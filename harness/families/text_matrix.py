"""The text (mlx-lm architecture) matrix: every module of the installed mlx-lm's models package,
tried tiny (:mod:`.text`).

:func:`run_rows` tries architectures in worker processes (:mod:`.worker`) and keeps going
when one dies or hangs: the row says where. :func:`matrix` returns the cached matrix for the
installed mlx-lm and mlx versions, or runs it and caches it, so it regenerates when either is
upgraded (or the derivation changes: :data:`MATRIX_VERSION`). The runner and the cache are
every family sweep's (:mod:`.matrix`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.families.matrix import MatrixSpec, column_counts
from harness.families.matrix import to_json as to_json
from harness.families.matrix import write as write
from harness.families.row import ArchRow, Outcome
from harness.families.text import COLUMNS
from harness.families.worker import command

MATRIX_VERSION = 2  # bump when the derivation or the checks change what a row means
ARCH_TIMEOUT_S = 300.0  # one architecture making no progress for this long is stopped
PACKAGES = ("mlx-lm", "mlx")
WORKER = command("text")
SPEC = MatrixSpec(
    "arch-matrix", PACKAGES, MATRIX_VERSION, COLUMNS, "architectures", WORKER, ARCH_TIMEOUT_S
)


@dataclass(frozen=True)
class Matrix:
    """Rows for every architecture module, the helpers left out, and how it was made."""

    versions: Mapping[str, str]  # package -> installed version
    rows: tuple[ArchRow, ...]
    not_architectures: Mapping[str, str]  # module -> why it is no architecture
    wall_s: float  # seconds the run took (when it was made, not when it was read from the cache)
    cached: bool = False

    def counts(self) -> dict[str, Counter[Outcome]]:
        """Per column ("generated" first), how many rows have each outcome."""
        return column_counts(self.rows, COLUMNS)

    def to_json(self) -> dict[str, Any]:
        extra = {"not_architectures": dict(self.not_architectures)}
        return SPEC.to_json(self.versions, self.wall_s, self.rows, extra)


cache_path = SPEC.cache_path
run_rows = SPEC.run_rows
rows_from_events = SPEC.rows_from_events


def matrix(
    *,
    force: bool = False,
    names: Sequence[str] | None = None,
    root: Path | None = None,
    on_row: Callable[[ArchRow], None] | None = None,
) -> Matrix:
    """The matrix of the installed versions: from the cache, else run (and cached when complete).

    ``names`` limits it to some architectures (run, never cached).
    """
    from harness.models.zoo.derive_text import NOT_ARCHITECTURES, architecture_names

    def make(versions: dict[str, str], rows: tuple[ArchRow, ...], wall_s: float) -> Matrix:
        return Matrix(versions, rows, NOT_ARCHITECTURES, wall_s)

    return SPEC.cached_or_run(
        every=architecture_names,
        run=run_rows,
        make=make,
        parse=lambda data: from_json(data, cached=True),
        force=force,
        names=names,
        root=root,
        on_row=on_row,
    )


def from_json(data: Mapping[str, Any], *, cached: bool = False) -> Matrix:
    rows = SPEC.rows_from_json(data)
    return Matrix(
        dict(data["versions"]), rows, dict(data["not_architectures"]), float(data["wall_s"]), cached
    )


def read(path: Path) -> Matrix | None:
    """The matrix cached at ``path``; None when absent, unreadable or of another version."""
    return SPEC.read(path, lambda data: from_json(data, cached=True))
