"""OpenBLAS preloading for MLX's CPU backend on Linux (10-70x on dense float32 matmuls)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

DISABLE_ENV = "MLX_HARNESS_OPENBLAS"  # set to 0 to measure MLX's bundled BLAS instead
CANDIDATES = (
    "/usr/lib/x86_64-linux-gnu/libopenblas.so.0",
    "/usr/lib/aarch64-linux-gnu/libopenblas.so.0",
    "/usr/lib64/libopenblas.so.0",
    "/usr/lib/libopenblas.so.0",
)


def openblas_library(env: Mapping[str, str]) -> Path | None:
    """The OpenBLAS to preload, or None (not Linux, not installed, or disabled)."""
    if not sys.platform.startswith("linux") or env.get(DISABLE_ENV, "1") == "0":
        return None
    for candidate in CANDIDATES:
        if Path(candidate).is_file():
            return Path(candidate)
    return None


def worker_env(base: Mapping[str, str], *, offline: bool = True) -> dict[str, str]:
    """Environment for a worker: OpenBLAS preloaded when available, hub offline by default."""
    env = dict(base)
    library = openblas_library(env)
    if library is not None:
        preload = env.get("LD_PRELOAD", "")
        if str(library) not in preload.split():
            env["LD_PRELOAD"] = f"{library} {preload}".strip()
    if offline:
        env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env["PYTHONUNBUFFERED"] = "1"
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def planned_blas(env: Mapping[str, str]) -> str:
    library = openblas_library(env)
    if library is not None:
        return f"openblas (LD_PRELOAD {library})"
    if sys.platform == "darwin":
        return "accelerate"
    return "bundled (reference BLAS)"
