"""OpenBLAS for MLX's CPU backend: preloaded into a running process, MLX's matmuls bind to it
(seen in the dynamic linker's own account, ``LD_DEBUG=bindings``), and this test session runs so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.runner.blas import DISABLE_ENV, openblas_library

LIBRARY = openblas_library(os.environ)
needs_openblas = pytest.mark.skipif(
    LIBRARY is None, reason="no OpenBLAS here (Linux: apt-get install libopenblas0-pthread)"
)

SCRIPT = """
import os, sys
from tests.blas_preload import preload_in_process
if sys.argv[1] == "mlx-first":
    import mlx.core
print(preload_in_process(os.environ))
import mlx.core as mx
a = mx.ones((32, 32))
mx.eval(a @ a)
"""


def _bound(order: str, env: dict[str, str]) -> tuple[str, str]:
    """(what preload_in_process returned, the library libmlx's cblas_sgemm was bound to)."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, order],
        env={**os.environ, **env, "LD_DEBUG": "bindings", "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    bindings = [
        line for line in done.stderr.splitlines() if "libmlx" in line and "`cblas_sgemm'" in line
    ]
    assert bindings, done.stderr[-2000:]
    return done.stdout.strip(), bindings[0].split(" to ", 1)[1].split(" [", 1)[0]


@needs_openblas
@pytest.mark.parametrize(
    ("order", "env", "returned", "bound"),
    [
        ("preload-first", {}, str(LIBRARY), str(LIBRARY)),
        ("preload-first", {DISABLE_ENV: "0"}, "None", "mlx_cpu.libs/libblas"),  # disabled
        ("mlx-first", {}, "None", "mlx_cpu.libs/libblas"),  # too late: MLX keeps its own
    ],
    ids=["preloaded", "disabled", "too-late"],
)
def test_mlx_binds_its_matmuls_to_the_preloaded_openblas(
    order: str, env: dict[str, str], returned: str, bound: str
) -> None:
    got, library = _bound(order, env)
    assert got == returned
    assert bound in library, library


def test_this_session_runs_mlx_on_openblas_where_workers_would(
    preloaded_blas: Path | None,
) -> None:
    """tests/conftest.py loads it before anything imports mlx.core (else it is None: too late)."""
    assert preloaded_blas == LIBRARY
