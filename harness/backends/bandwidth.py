"""The device's ceilings: its memory read bandwidth and float32 matmul FLOP rate, measured with
kernels that reach the hardware's limit, cached per machine fingerprint in the harness cache.

Decode on one machine is bound by memory reads: every generated token reads the weights (and
the KV cache), so no decode can read faster than the memory delivers. The ceiling is therefore
the hardware's, measured by the fastest streaming kernel (:mod:`harness.backends.bandwidth_kernels`:
numpy reductions on every core and a BLAS gemv on a CPU device, MLX's reductions and copies on a
GPU), the best of ``BURSTS`` bursts. MLX's own decode kernels (its ``gemv`` and ``sum``) are
measured beside it: their speed is MLX's, and a report shows decode against it as kernel
efficiency, never as the ceiling. The FLOP ceiling is the best of a BLAS sgemm and MLX's matmul
(MLX's matmul on a GPU), the bound of a prefill's matmuls.

The measurement runs in a process of its own (:mod:`harness.backends.bandwidth_child`), so its
buffers never count in a case's memory peak; in the worker itself only when that process
fails. It records the conditions it ran under (load average, other processes' CPU share) and
when. A cached figure is used while it is younger than ``MAX_AGE_S`` (``MAX_AGE_BUSY_S`` when
other processes kept more than ``BUSY_SHARE`` of the CPUs busy while it was measured: a
disturbed figure is low) and of this ``CACHE_FORMAT``; the throughput scenario re-measures once
when a share passes 100% (``remeasure``).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.backends.bandwidth_conditions import Conditions, watch
from harness.backends.bandwidth_kernels import MLX_GEMV, measure_kernels
from harness.backends.mlx_runtime import blas_in_use, mlx_device
from harness.models.cache_dir import cache_root

BUFFER_BYTES = 256 * 2**20  # float32 buffer read by each kernel: far beyond any cache
BURSTS = 9
CACHE_FORMAT = 3  # 2: MLX's own kernels, median of 7 (never reused: not the hardware's limit)
MAX_AGE_S = 7 * 24 * 3600.0  # a cached figure older than this is measured again
BUSY_SHARE = 0.25  # other processes kept more of the CPUs busy than this: a disturbed figure,
MAX_AGE_BUSY_S = 3600.0  # kept only this long
CLOCK_SLACK_S = 60.0  # a cached figure dated further in the future than this is not trusted
CHILD_TIMEOUT_S = 300.0
CHILD = "child"  # measured_in: a process of its own
WORKER = "worker"  # measured_in: the worker itself (the child failed, or a test)
STATISTIC = "best"  # of the bursts


@dataclass(frozen=True)
class Bandwidth:
    """The device's read ceiling (bytes/s) and FLOP ceiling (FLOP/s): each the best kernel's
    best burst, with every kernel's figure, MLX's own kernels beside them, and the conditions
    and time of the measurement."""

    bytes_per_s: float
    kernel: str  # the kernel that gave it
    kernels_bytes_per_s: Mapping[str, float]  # each read kernel's best burst
    mlx_kernels_bytes_per_s: Mapping[str, float]  # MLX's own decode kernels: not the ceiling
    flops_per_s: float
    flops_kernel: str
    flops_kernels_per_s: Mapping[str, float]
    device: str  # "cpu" or "gpu": mlx's default device
    threads: int  # threads the CPU streaming kernel used
    buffer_bytes: int
    bursts: int
    conditions: Conditions
    fingerprint: str
    machine: Mapping[str, str]  # what the fingerprint hashes
    measured_unix_s: float
    reason: str  # why it was measured
    measured_in: str = CHILD
    source: str = "measured"  # "measured" now, or "cached" (read back from the harness cache)

    @property
    def mlx_gemv_bytes_per_s(self) -> float:
        """MLX's own gemv speed (0: not measured), what kernel efficiency is judged against."""
        return float(self.mlx_kernels_bytes_per_s.get(MLX_GEMV, 0.0))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": CACHE_FORMAT, "statistic": STATISTIC}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Conditions):
                value = value.to_json()
            elif isinstance(value, Mapping):
                value = dict(value)
            data[f.name] = value
        return data

    @staticmethod
    def from_json(data: Mapping[str, Any], source: str) -> Bandwidth:
        """A figure :meth:`to_json` wrote; ValueError when it is of another format."""
        if data.get("format") != CACHE_FORMAT:
            raise ValueError(f"bandwidth format {data.get('format')!r}, not {CACHE_FORMAT}")

        def rates(key: str) -> Mapping[str, float]:
            return MappingProxyType({str(k): float(v) for k, v in data[key].items()})

        return Bandwidth(
            bytes_per_s=float(data["bytes_per_s"]),
            kernel=str(data["kernel"]),
            kernels_bytes_per_s=rates("kernels_bytes_per_s"),
            mlx_kernels_bytes_per_s=rates("mlx_kernels_bytes_per_s"),
            flops_per_s=float(data["flops_per_s"]),
            flops_kernel=str(data["flops_kernel"]),
            flops_kernels_per_s=rates("flops_kernels_per_s"),
            device=str(data["device"]),
            threads=int(data["threads"]),
            buffer_bytes=int(data["buffer_bytes"]),
            bursts=int(data["bursts"]),
            conditions=Conditions.from_json(data["conditions"]),
            fingerprint=str(data["fingerprint"]),
            machine=MappingProxyType({str(k): str(v) for k, v in data["machine"].items()}),
            measured_unix_s=float(data["measured_unix_s"]),
            reason=str(data["reason"]),
            measured_in=str(data.get("measured_in", CHILD)),
            source=source,
        )


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
    from importlib.metadata import PackageNotFoundError, version  # costly: only when measured

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


def device_kind() -> str:
    """``gpu`` or ``cpu``: the kind of mlx's default device (``mlx_device``'s first word)."""
    return "gpu" if mlx_device().split(" ", 1)[0] == "gpu" else "cpu"


def fingerprint(facts: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps(dict(facts), sort_keys=True).encode()).hexdigest()[:16]


def cache_file(print_: str, root: Path | None = None) -> Path:
    return (root or cache_root()) / "bandwidth" / f"{print_}.json"


def _best(rates: Mapping[str, float]) -> tuple[str, float]:
    if not rates:
        return "none", 0.0
    name = max(rates, key=lambda k: rates[k])
    return name, rates[name]


def measure(
    buffer_bytes: int = BUFFER_BYTES, bursts: int = BURSTS, reason: str = "asked"
) -> Bandwidth | None:
    """Measure now, in this process; None when no backend has imported mlx in it."""
    mx = sys.modules.get("mlx.core")
    if mx is None:
        return None
    kind = device_kind()
    done = watch()
    figures = measure_kernels(mx, kind == "gpu", buffer_bytes, bursts)
    conditions = done()
    kernel, rate = _best(figures.read_bytes_per_s)
    flops_kernel, flops = _best(figures.flops_per_s)
    facts = machine_facts()
    return Bandwidth(
        bytes_per_s=rate,
        kernel=kernel,
        kernels_bytes_per_s=MappingProxyType(figures.read_bytes_per_s),
        mlx_kernels_bytes_per_s=MappingProxyType(figures.mlx_bytes_per_s),
        flops_per_s=flops,
        flops_kernel=flops_kernel,
        flops_kernels_per_s=MappingProxyType(figures.flops_per_s),
        device=kind,
        threads=figures.threads,
        buffer_bytes=figures.buffer_bytes,
        bursts=bursts,
        conditions=conditions,
        fingerprint=fingerprint(facts),
        machine=MappingProxyType(facts),
        measured_unix_s=time.time(),
        reason=reason,
        measured_in=WORKER,
    )


def measure_in_child(
    reason: str, buffer_bytes: int = BUFFER_BYTES, bursts: int = BURSTS
) -> tuple[Bandwidth | None, str]:
    """Measure in a process of its own (on mlx's device kind here), stamped with this
    process's machine facts (the cache key it is read back with); (None, why) on failure."""
    command = [
        sys.executable,
        "-m",
        "harness.backends.bandwidth_child",
        f"--device={device_kind()}",
        f"--buffer-bytes={buffer_bytes}",
        f"--bursts={bursts}",
        f"--reason={reason}",
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"its process did not run: {type(error).__name__}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [""])[-1][:200]
        return None, f"its process exited {done.returncode}: {last}"
    try:
        found = Bandwidth.from_json(json.loads(done.stdout.strip().splitlines()[-1]), "measured")
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
        return None, f"its process printed no figure: {type(error).__name__}"
    facts = machine_facts()
    return (
        replace(
            found,
            fingerprint=fingerprint(facts),
            machine=MappingProxyType(facts),
            measured_in=CHILD,
        ),
        "",
    )


def stale_reason(cached: Bandwidth | None, now_unix_s: float) -> str | None:
    """Why a cached figure must be measured again, or None when it can be used."""
    if cached is None:
        return "no cached figure of this format for this machine"
    age_s = now_unix_s - cached.measured_unix_s
    if age_s > MAX_AGE_S:
        return f"the cached figure was {age_s / 86400:.1f} days old (at most {MAX_AGE_S / 86400:g})"
    if age_s < -CLOCK_SLACK_S:
        return "the cached figure is dated in the future"
    busy = cached.conditions.others_cpu_share
    if busy is not None and busy > BUSY_SHARE and age_s > MAX_AGE_BUSY_S:
        return (
            f"the cached figure was measured while other processes kept {busy:.0%} of the CPUs "
            f"busy, {age_s / 3600:.1f} hours ago (at most {MAX_AGE_BUSY_S / 3600:g} then)"
        )
    return None


def _read_cached(path: Path) -> Bandwidth | None:
    """The cached figure, or None when the file is missing or not one this code wrote."""
    try:
        return Bandwidth.from_json(json.loads(path.read_text(encoding="utf-8")), "cached")
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None


def _write_cached(path: Path, found: Bandwidth) -> None:
    data = found.to_json()
    data.pop("source", None)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass  # a read-only cache only costs a new measurement next time


def read_bandwidth(
    root: Path | None = None, *, remeasure: str | None = None, now_unix_s: float | None = None
) -> Bandwidth | None:
    """This machine's ceilings: from the harness cache while the figure there is fresh (see
    :func:`stale_reason`), else measured now and cached. ``remeasure`` (why) measures now
    whatever the cache holds, in a process of its own only: None when that fails, since a
    measurement in the worker would count in the memory peak of the case that asked. None
    too when mlx is not loaded in this process."""
    if sys.modules.get("mlx.core") is None:
        return None
    path = cache_file(fingerprint(machine_facts()), root)
    reason = remeasure
    if reason is None:
        cached = _read_cached(path)
        reason = stale_reason(cached, time.time() if now_unix_s is None else now_unix_s)
        if reason is None:
            return cached
    found, why_not = measure_in_child(reason)
    if found is None and remeasure is None:
        found = measure(reason=f"{reason}; in the worker, as {why_not}")
    if found is not None:
        _write_cached(path, found)
    return found
