"""A fake package index: tiny wheels of ``harness-fake-dep`` 1.0 ... 1.9, built in-process.

Each wheel is a backend plug-in (entry point ``mlx_harness.backends: fake_dep``) over the
fake backend; from ``slow_from`` on it generates ``factor`` times slower, and from
``broken_from`` on its load raises. A suite names ``backend: fake_dep``. With ``TRACE_ENV``
set to a file, each generation appends the version that made it (which run went when).
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

PACKAGE = "harness-fake-dep"
VERSIONS = tuple(f"1.{i}" for i in range(10))
TRACE_ENV = "HARNESS_FAKE_DEP_TRACE"

MODULE = """\
import os

from harness.backends.fake import FakeBackend, FakeModel

PER_TOKEN_S = {per_token_s!r}
BROKEN = {broken!r}


class TracedModel(FakeModel):
    def stream_tokens(self, prompt, **kwargs):
        trace = os.environ.get("{trace_env}")
        if trace:
            with open(trace, "a") as fh:
                fh.write("{version}\\n")
        return super().stream_tokens(prompt, **kwargs)


class FakeDepBackend(FakeBackend):
    name = "fake_dep"

    def load(self, path):
        if BROKEN:
            raise RuntimeError("harness-fake-dep {version}: load broken on purpose")
        model, info = super().load(path)
        return TracedModel({{**model.config, "per_token_s": PER_TOKEN_S}}), info


BACKEND = FakeDepBackend()
"""


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(folder: Path, version: str, per_token_s: float, broken: bool = False) -> Path:
    info = f"harness_fake_dep-{version}.dist-info"
    files = {
        "harness_fake_dep/__init__.py": MODULE.format(
            per_token_s=per_token_s, broken=broken, version=version, trace_env=TRACE_ENV
        ),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": "[mlx_harness.backends]\nfake_dep = harness_fake_dep:BACKEND\n",
    }
    path = folder / f"harness_fake_dep-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        lines = []
        for name, text in files.items():
            wheel.writestr(name, text)
            lines.append(_record_line(name, text.encode()))
        wheel.writestr(f"{info}/RECORD", "\n".join([*lines, f"{info}/RECORD,,"]) + "\n")
    return path


def write_index(
    folder: Path,
    *,
    slow_from: str | None = None,
    broken_from: str | None = None,
    per_token_s: float = 0.002,
    factor: float = 15.0,
) -> Path:
    """Wheels of every version in ``folder`` (a --find-links folder); returns it. ``factor``:
    how much slower the slow versions generate, a gap no load on a shared box closes."""
    from packaging.version import Version

    folder.mkdir(parents=True, exist_ok=True)
    for version in VERSIONS:
        slow = slow_from is not None and Version(version) >= Version(slow_from)
        broken = broken_from is not None and Version(version) >= Version(broken_from)
        write_wheel(folder, version, per_token_s * (factor if slow else 1.0), broken)
    (folder / "harness_fake_dep-2.0rc1-py3-none-any.whl").write_bytes(b"")  # a pre-release
    return folder
