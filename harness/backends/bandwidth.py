"""The device's memory read bandwidth (and its float32 matmul FLOP rate), measured with MLX
kernels in the worker (mlx already imported by a backend) and cached per machine fingerprint
in the harness cache.

Decode on one machine is bound by memory reads: every generated token reads the weights (and
the KV cache). The bandwidth a decode step could reach is measured with the kernels decode is
made of, over a buffer much larger than the caches: a full reduction (``sum``) and a
matrix-vector product (``gemv``, what a decode step's linear layers are). Each kernel runs
``repeats`` times after a warm-up; its figure is the median; the bandwidth is the best
kernel's median (on the CPU backend, MLX's reductions are single-threaded and compute-bound,
while a BLAS gemv streams memory on every core). The FLOP rate is the median of a float32
``GEMM_SIDE``-square matrix product (2 n^3 FLOPs), the bound of a prefill's matmuls.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.backends.mlx_runtime import blas_in_use, mlx_device
from harness.models.cache_dir import cache_root

BUFFER_BYTES = 256 * 2**20  # float32 buffer read by each kernel: far beyond any cache
REPEATS = 7
GEMM_SIDE = 1024
CACHE_FORMAT = 2


@dataclass(frozen=True)
class Bandwidth:
    """Measured read bandwidth in bytes per second (the best kernel's median)."""

    bytes_per_s: float
    kernel: str  # the kernel that gave it
    kernels_bytes_per_s: Mapping[str, float]  # each kernel's median
    buffer_bytes: int
    repeats: int
    fingerprint: str
    machine: Mapping[str, str]  # what the fingerprint hashes
    measured_unix_s: float
    flops_per_s: float = 0.0  # float32 matmul FLOP rate (0: not measured)
    source: str = "measured"  # "measured" now, or "cached" (read back from the harness cache)

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["kernels_bytes_per_s"] = dict(self.kernels_bytes_per_s)
        data["machine"] = dict(self.machine)
        return data


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_facts() -> dict[str, str]:
    """What the bandwidth depends on: host, CPU, cores, the MLX device and version, BLAS."""
    try:
        mlx_version = version("mlx")
    except PackageNotFoundError:
        mlx_version = "unknown"
    return {
        "hostname": platform.node(),
        "arch": platform.machine(),
        "cpu": _cpu_name(),
        "cores": str(os.cpu_count() or 0),
        "mlx": mlx_version,
        "device": mlx_device(),
        "blas": blas_in_use().split(" ", 1)[0],
    }


def fingerprint(facts: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps(dict(facts), sort_keys=True).encode()).hexdigest()[:16]


def cache_file(print_: str, root: Path | None = None) -> Path:
    return (root or cache_root()) / "bandwidth" / f"{print_}.json"


def _median_rate(run: Callable[[], object], nbytes: int, repeats: int, mx: Any) -> float:
    mx.eval(run())  # warm-up: allocation, thread pools
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        mx.eval(run())
        rates.append(nbytes / (time.perf_counter() - start))
    return statistics.median(rates)


def _kernel_rates(mx: Any, side: int, repeats: int) -> dict[str, float]:
    """Median bytes/s of each kernel over a ``side`` x ``side`` float32 matrix."""
    matrix = mx.ones((side, side), dtype=mx.float32)
    vector = mx.ones((1, side), dtype=mx.float32)
    mx.eval(matrix, vector)
    nbytes = int(matrix.nbytes)
    return {
        "sum": _median_rate(lambda: mx.sum(matrix), nbytes, repeats, mx),
        "gemv": _median_rate(lambda: vector @ matrix.T, nbytes, repeats, mx),
    }


def _gemm_flops(mx: Any, side: int, repeats: int) -> float:
    """Median FLOP/s of a float32 ``side`` x ``side`` matrix product."""
    a = mx.ones((side, side), dtype=mx.float32)
    b = mx.ones((side, side), dtype=mx.float32)
    mx.eval(a, b)
    return _median_rate(lambda: a @ b, 2 * side**3, repeats, mx)


def measure(buffer_bytes: int = BUFFER_BYTES, repeats: int = REPEATS) -> Bandwidth | None:
    """Measure now; None when no backend has imported mlx in this process."""
    mx = sys.modules.get("mlx.core")
    if mx is None:
        return None
    side = max(64, int((buffer_bytes // 4) ** 0.5))
    kernels = _kernel_rates(mx, side, repeats)
    flops = _gemm_flops(mx, GEMM_SIDE, repeats)
    mx.clear_cache()
    nbytes = side * side * 4
    best = max(kernels, key=lambda k: kernels[k])
    facts = machine_facts()
    return Bandwidth(
        bytes_per_s=kernels[best],
        kernel=best,
        kernels_bytes_per_s=MappingProxyType(kernels),
        buffer_bytes=nbytes,
        repeats=repeats,
        fingerprint=fingerprint(facts),
        machine=MappingProxyType(facts),
        measured_unix_s=time.time(),
        flops_per_s=flops,
    )


def _read_cached(path: Path) -> Bandwidth | None:
    """The cached figure, or None when the file is missing or not one this code wrote."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != CACHE_FORMAT:
            return None
        return Bandwidth(
            bytes_per_s=float(data["bytes_per_s"]),
            kernel=str(data["kernel"]),
            kernels_bytes_per_s=MappingProxyType(
                {str(k): float(v) for k, v in data["kernels_bytes_per_s"].items()}
            ),
            buffer_bytes=int(data["buffer_bytes"]),
            repeats=int(data["repeats"]),
            fingerprint=str(data["fingerprint"]),
            machine=MappingProxyType({str(k): str(v) for k, v in data["machine"].items()}),
            measured_unix_s=float(data["measured_unix_s"]),
            flops_per_s=float(data["flops_per_s"]),
            source="cached",
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write_cached(path: Path, found: Bandwidth) -> None:
    data = {"format": CACHE_FORMAT, **found.to_json()}
    data.pop("source", None)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass  # a read-only cache only costs a new measurement next time


def read_bandwidth(root: Path | None = None) -> Bandwidth | None:
    """This machine's bandwidth: from the harness cache when this fingerprint has one, else
    measured now and cached. None when mlx is not loaded in this process."""
    if sys.modules.get("mlx.core") is None:
        return None
    path = cache_file(fingerprint(machine_facts()), root)
    cached = _read_cached(path)
    if cached is not None:
        return cached
    found = measure()
    if found is not None:
        _write_cached(path, found)
    return found
