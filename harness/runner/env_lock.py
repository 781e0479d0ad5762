"""The run's environment against the harness's lock file (``uv.lock`` beside pyproject.toml).

``make setup`` installs exactly the lock, so a run from a checkout says whether the packages it
measured with are the tested ones: every installed distribution the lock names must be at one
of the lock's versions (a universal lock may hold several, one per platform or Python), and one
the lock lacks is a difference too. The installers' own tools (pip, setuptools, wheel) are left
out, as is the harness itself. An installed harness (no checkout, no lock) records nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

from harness.core.types import LockCheck

LOCK_FILE = "uv.lock"
TOOLING = frozenset({"pip", "setuptools", "wheel", "mlx-harness"})


class LockUnreadable(ValueError):
    """A lock file that is not a uv lock: one line naming it."""


# how uv writes each package: its name and version are the first two lines of the table
PACKAGE = re.compile(r'^\[\[package\]\]\nname = "([^"]+)"\nversion = "([^"]+)"$', re.MULTILINE)


def lock_versions(text: str, path: Path) -> dict[str, frozenset[str]]:
    """``name -> versions`` of a uv.lock's packages (names normalised): read by the pattern uv
    writes (milliseconds for a lock of 100 packages) when every package matches it, else by
    parsing the TOML."""
    import tomllib

    from packaging.utils import canonicalize_name

    quick: dict[str, set[str]] = {}
    matched = PACKAGE.findall(text)
    if matched and len(matched) == text.count("[[package]]"):
        for name, version in matched:
            quick.setdefault(canonicalize_name(name), set()).add(version)
        return {name: frozenset(versions) for name, versions in quick.items()}
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LockUnreadable(f"{path}: not a TOML lock ({exc}); run `make lock`") from None
    packages = data.get("package")
    if not isinstance(packages, list):
        raise LockUnreadable(f"{path}: no [[package]] entries; run `make lock`")
    found: dict[str, set[str]] = {}
    for package in packages:
        if not isinstance(package, dict):
            continue
        name, version = package.get("name"), package.get("version")
        if isinstance(name, str) and isinstance(version, str):
            found.setdefault(canonicalize_name(name), set()).add(version)
    return {name: frozenset(versions) for name, versions in found.items()}


def check_against(
    locked: Mapping[str, frozenset[str]], installed: Mapping[str, str], path: Path, sha256: str
) -> LockCheck:
    """The installed versions (normalised names) held against the lock's."""
    differences = []
    checked = 0
    for name, version in sorted(installed.items()):
        if name in TOOLING:
            continue
        checked += 1
        versions = locked.get(name)
        if versions is None:
            differences.append(f"{name} {version} (not in the lock)")
        elif version not in versions:
            differences.append(f"{name} {version} (lock: {', '.join(sorted(versions))})")
    return LockCheck(lock=str(path), sha256=sha256, checked=checked, differences=tuple(differences))


def environment_lock(checkout: Path | None = None) -> LockCheck | None:
    """This process's environment against the checkout's uv.lock; None without one. A lock
    that cannot be read is a difference of its own (the run goes on; the report says so)."""
    from harness.probe.source import installed_versions
    from harness.runner.pin_env import checkout_root

    path = (checkout or checkout_root()) / LOCK_FILE
    try:
        data = path.read_bytes()
    except OSError:
        return None
    sha256 = hashlib.sha256(data).hexdigest()
    try:
        locked = lock_versions(data.decode("utf-8", errors="replace"), path)
    except LockUnreadable as exc:
        return LockCheck(lock=str(path), sha256=sha256, checked=0, differences=(str(exc),))
    return check_against(locked, installed_versions(), path, sha256)
