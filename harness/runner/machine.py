"""The machine fingerprint and package versions every run record carries."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from harness.core.types import Machine

PACKAGES = (
    "mlx-harness",
    "mlx",
    "mlx-cpu",
    "mlx-metal",
    "mlx-cuda",
    "mlx-lm",
    "mlx-vlm",
    "mlx-audio",
    "transformers",
    "tokenizers",
    "huggingface_hub",
    "numpy",
    "safetensors",
)


def package_versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def _sysctl(key: str) -> str:
    try:
        out = subprocess.run(["sysctl", "-n", key], capture_output=True, text=True, timeout=5)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def cpu_name() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    if sys.platform == "darwin":
        return _sysctl("machdep.cpu.brand_string") or platform.processor()
    return platform.processor() or platform.machine()


def memory_bytes() -> int:
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    if sys.platform == "darwin":
        value = _sysctl("hw.memsize")
        return int(value) if value.isdigit() else 0
    return 0


def machine(blas: str) -> Machine:
    return Machine(
        os=platform.system(),
        os_release=platform.release(),
        arch=platform.machine(),
        cpu=cpu_name(),
        cores=os.cpu_count() or 0,
        memory_bytes=memory_bytes(),
        python=platform.python_version(),
        hostname=socket.gethostname(),
        blas=blas,
    )


def git_sha(start: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=start, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    if out.returncode != 0 or not sha:
        return None
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=start,
        capture_output=True,
        text=True,
        timeout=5,
    ).stdout.strip()
    return f"{sha}-dirty" if dirty else sha
