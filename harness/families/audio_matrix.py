"""The audio family sweep: every tts and stt model package of the installed mlx-audio,
generated tiny and tried (load, run) in worker processes (:mod:`.audio`, :mod:`.worker`).

:func:`matrix` returns the cached matrix for the installed mlx-audio and mlx versions, or runs
it and caches it, so it regenerates when either is upgraded (or the derivation changes:
:data:`MATRIX_VERSION`). A worker that dies or hangs costs its family a failed cell and the next
worker goes on (:mod:`.matrix`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from harness.families.audio import COLUMNS
from harness.families.matrix import FamilyMatrix, MatrixSpec
from harness.families.matrix import to_json as to_json
from harness.families.matrix import write as write
from harness.families.row import ArchRow
from harness.families.worker import command

MATRIX_VERSION = 1  # bump when the derivation or the checks change what a row means
FAMILY_TIMEOUT_S = 180.0  # one family making no progress for this long is stopped
PACKAGES = ("mlx-audio", "mlx")
WORKER = command("audio")
SPEC = MatrixSpec(
    "audio-matrix", PACKAGES, MATRIX_VERSION, COLUMNS, "families", WORKER, FAMILY_TIMEOUT_S
)


class AudioMatrix(FamilyMatrix):
    """One row per tts/stt model package of mlx-audio, and how the matrix was made."""

    spec = SPEC


cache_path = SPEC.cache_path
run_rows = SPEC.run_rows
rows_from_events = SPEC.rows_from_events
from_json = AudioMatrix.from_json
read = AudioMatrix.read


def matrix(
    *,
    force: bool = False,
    names: Sequence[str] | None = None,
    root: Path | None = None,
    on_row: Callable[[ArchRow], None] | None = None,
) -> AudioMatrix:
    """The matrix of the installed versions: from the cache, else run (cached when complete).
    ``names`` limits it to some families (run, never cached)."""
    from harness.models.zoo.derive_audio import family_names

    return AudioMatrix.cached_or_run(
        family_names, run_rows, force=force, names=names, root=root, on_row=on_row
    )
