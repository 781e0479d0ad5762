"""OpenBLAS loaded into the test process itself, as ``LD_PRELOAD`` does for the harness's workers.

Only the tests run MLX in their own process (a run loads models in its workers, whose
environment :func:`harness.runner.blas.worker_env` gives), so this lives beside them.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Mapping
from pathlib import Path

from harness.runner.blas import openblas_library


def preload_in_process(env: Mapping[str, str]) -> Path | None:
    """Load OpenBLAS into this running process so that MLX binds its BLAS calls to it, as
    ``LD_PRELOAD`` does for the workers: loaded globally before ``mlx.core`` (whose own BLAS comes
    after the global scope in symbol lookup). The library loaded, or None: not available, disabled
    (``harness.runner.blas.DISABLE_ENV``), or too late (``mlx.core`` already imported and bound)."""
    library = openblas_library(env)
    if library is None or "mlx.core" in sys.modules:
        return None
    ctypes.CDLL(str(library), mode=ctypes.RTLD_GLOBAL)
    return library
