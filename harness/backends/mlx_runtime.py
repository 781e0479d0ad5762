"""What MLX runs on and how much memory it uses, read in the process that loaded a model (the
worker; mlx already imported by a backend: this module never imports it itself)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.backends.base import LoadInfo, weights_bytes
from harness.backends.proc_status import vm_hwm_bytes


@dataclass(frozen=True)
class MemorySnapshot:
    mlx_peak_bytes: int | None
    mlx_active_bytes: int | None
    process_peak_rss_bytes: int | None
    rss_view: str  # how the RSS peak was taken: "since case start" or "since worker start"


def _mlx():  # type: ignore[no-untyped-def]
    """mlx.core if a backend already imported it; the harness never imports it itself here."""
    return sys.modules.get("mlx.core")


def mlx_device() -> str:
    mx = _mlx()
    if mx is None:
        return "none (mlx not loaded)"
    device = mx.default_device()
    kind = "gpu" if device.type == mx.gpu else "cpu"
    name = ""
    try:
        info = mx.device_info()
        name = str(info.get("device_name") or info.get("architecture") or "")
    except Exception:  # device_info is missing on old MLX; the kind alone still says enough
        name = ""
    return f"{kind} ({name})" if name else kind


_CLEAR_REFS = Path("/proc/self/clear_refs")
_STATUS = Path("/proc/self/status")


def reset_peaks() -> str:
    """Reset MLX's peak counter and, on Linux, the process RSS high-water mark."""
    mx = _mlx()
    if mx is not None:
        mx.reset_peak_memory()
    try:
        _CLEAR_REFS.write_text("5")
        return "since case start"
    except OSError:
        return "since worker start"


def _rss_peak_bytes() -> int | None:
    peak_bytes = vm_hwm_bytes(_STATUS)
    if peak_bytes is not None:
        return peak_bytes
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak if sys.platform == "darwin" else peak * 1024)
    except (ImportError, OSError):
        return None


def snapshot(rss_view: str) -> MemorySnapshot:
    mx = _mlx()
    return MemorySnapshot(
        mlx_peak_bytes=int(mx.get_peak_memory()) if mx is not None else None,
        mlx_active_bytes=int(mx.get_active_memory()) if mx is not None else None,
        process_peak_rss_bytes=_rss_peak_bytes(),
        rss_view=rss_view,
    )


def blas_in_use() -> str:
    """Which BLAS the process has mapped: OpenBLAS (and how) or MLX's bundled one."""
    maps = Path("/proc/self/maps")
    try:
        text = maps.read_text()
    except OSError:
        return "accelerate" if sys.platform == "darwin" else "unknown"
    for line in text.splitlines():
        if "libopenblas" in line:
            return f"openblas ({line.split()[-1]})"
    return "bundled (reference BLAS)"


def loaded_info(path: Path, start: float, **details: Any) -> LoadInfo:
    """What an MLX backend reports after loading ``path``: seconds since ``start``, weight
    bytes, the device, and MLX's active and peak memory now (plus the backend's ``details``)."""
    mx = _mlx()
    memory = (
        {
            "mlx_active_bytes": int(mx.get_active_memory()),
            "mlx_peak_bytes": int(mx.get_peak_memory()),
        }
        if mx is not None
        else {}
    )
    return LoadInfo(
        load_s=time.perf_counter() - start,
        weights_bytes=weights_bytes(path),
        device=mlx_device(),
        details={**memory, **details},
    )
