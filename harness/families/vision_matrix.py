"""The vision family sweep: every model package of the installed mlx-vlm, generated tiny and
tried (load, text, image, cache, tool) in worker processes (:mod:`.vision`, :mod:`.worker`).

:func:`matrix` returns the cached matrix for the installed mlx-vlm, transformers and mlx
versions, or runs it and caches it, so it regenerates when one is upgraded (or the derivation
changes: :data:`MATRIX_VERSION`). A worker that dies or hangs costs its family a failed cell and
the next worker goes on (:mod:`.matrix`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from harness.families.matrix import FamilyMatrix, MatrixSpec
from harness.families.matrix import to_json as to_json
from harness.families.matrix import write as write
from harness.families.row import ArchRow
from harness.families.text_matrix import ARCH_TIMEOUT_S
from harness.families.vision import COLUMNS
from harness.families.worker import command
from harness.models.zoo.derive_vision_family import DERIVATION_VERSION

MATRIX_VERSION = 1 + 100 * DERIVATION_VERSION  # bump when a row's meaning changes
PACKAGES = ("mlx-vlm", "transformers", "mlx")
WORKER = command("vision")
SPEC = MatrixSpec(
    "vision-matrix", PACKAGES, MATRIX_VERSION, COLUMNS, "families", WORKER, ARCH_TIMEOUT_S
)


class VisionMatrix(FamilyMatrix):
    """One row per model package of mlx-vlm, and how the matrix was made."""

    spec = SPEC


cache_path = SPEC.cache_path
run_rows = SPEC.run_rows
rows_from_events = SPEC.rows_from_events
from_json = VisionMatrix.from_json
read = VisionMatrix.read


def matrix(
    *,
    force: bool = False,
    names: Sequence[str] | None = None,
    root: Path | None = None,
    on_row: Callable[[ArchRow], None] | None = None,
) -> VisionMatrix:
    """The matrix of the installed versions: from the cache, else run (cached when complete).

    ``names`` limits it to some families (run, never cached).
    """
    from harness.models.zoo.derive_vision_family import vision_model_types

    return VisionMatrix.cached_or_run(
        vision_model_types, run_rows, force=force, names=names, root=root, on_row=on_row
    )
