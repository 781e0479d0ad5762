"""One environment per pin set, built once under the harness cache and reused by content hash.

Two kinds:

- ``venv`` (the default): an isolated virtualenv with the pins, the harness's other
  requirements (a requirement on a pinned package is dropped: the pin wins, even below the
  harness's own lower bound) and this checkout installed editable without its dependencies.
  The suite then runs there, with that environment's Python in its workers.
- ``overlay``: only the pins, without their dependencies, installed into a folder that goes
  first on ``PYTHONPATH`` over the running environment. Seconds instead of minutes, for
  pure-Python packages whose dependencies the running environment already satisfies (bisecting
  mlx-lm over an installed mlx, or the tests' fake package).

An environment's folder is ``<cache>/envs/<pin-set>-<hash>``; the hash covers the pins, the
kind, the index options, the Python and the harness's version and dependency declaration
(pyproject.toml: an editable install follows the checkout's code, so only what it declares
needs a new environment). A marker file written last says the environment is complete;
a folder without it is removed and built again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from harness.models.cache_dir import cache_root

READY = ".mlx-harness-env-ready"
INSTALL_LOG = "install.log"
INSTALL_TIMEOUT_S = 1800.0


class EnvKind(str, Enum):
    VENV = "venv"
    OVERLAY = "overlay"


class PinEnvError(RuntimeError):
    """An environment that could not be built: one line naming the log with pip's output."""


@dataclass(frozen=True)
class PinEnvSpec:
    """What an environment holds: the pin set's name and pins, how and where from."""

    name: str
    pins: tuple[str, ...]
    kind: EnvKind = EnvKind.VENV
    index_url: str | None = None
    find_links: str | None = None  # a folder or URL of wheels/sdists, searched with no index


@dataclass(frozen=True)
class PinEnv:
    """A complete environment and how long making it ready took (seconds)."""

    spec: PinEnvSpec
    path: Path
    cold: bool  # built now (True) or found complete in the cache (False)
    ready_s: float

    def command(self, args: Sequence[str]) -> list[str]:
        """``mlx-harness ARGS`` run with this environment's packages."""
        if self.spec.kind is EnvKind.OVERLAY:
            return [sys.executable, "-m", "harness.cli", *args]
        return [str(self.path / "bin" / "python"), "-m", "harness.cli", *args]

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        """The process environment for :meth:`command` (the overlay goes first on the path)."""
        env = dict(base)
        env.pop("VIRTUAL_ENV", None)
        if self.spec.kind is EnvKind.OVERLAY:
            site = str(self.path / "site")
            env["PYTHONPATH"] = os.pathsep.join(p for p in (site, env.get("PYTHONPATH")) if p)
        return env


def checkout_root() -> Path:
    """The harness checkout this module runs from (what a venv installs editable)."""
    return Path(__file__).resolve().parents[2]


def envs_dir() -> Path:
    """Directory holding one sub-directory per pin-set environment."""
    return cache_root() / "envs"


def env_key(spec: PinEnvSpec, checkout: Path) -> str:
    """sha256 of everything that decides what the environment holds."""
    from harness import __version__

    pyproject = checkout / "pyproject.toml"
    declared = pyproject.read_bytes() if pyproject.is_file() else b""
    facts = {
        "pins": sorted(spec.pins),
        "kind": spec.kind.value,
        "index_url": spec.index_url,
        "find_links": spec.find_links,
        "python": [sys.version, getattr(sys, "_base_executable", sys.executable)],
        "harness": __version__,
        "pyproject_sha256": hashlib.sha256(declared).hexdigest(),
        "checkout": str(checkout),
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def env_path(spec: PinEnvSpec, checkout: Path) -> Path:
    return envs_dir() / f"{spec.name}-{env_key(spec, checkout)[:16]}"


def ensure_env(spec: PinEnvSpec, checkout: Path | None = None) -> PinEnv:
    """The environment of ``spec``: reused when complete, else built now (:class:`PinEnvError`
    when pip fails; its output is in the folder's install.log)."""
    root = checkout or checkout_root()
    path = env_path(spec, root)
    start = time.perf_counter()
    if (path / READY).is_file():
        return PinEnv(spec, path, cold=False, ready_s=time.perf_counter() - start)
    if path.exists():
        shutil.rmtree(path)  # an earlier build that did not finish
    path.mkdir(parents=True)
    log = path / INSTALL_LOG
    if spec.kind is EnvKind.OVERLAY:
        _pip(log, [sys.executable], ["--target", str(path / "site"), "--no-deps", *spec.pins], spec)
    else:
        _build_venv(spec, path, root, log)
    (path / READY).write_text(json.dumps({"name": spec.name, "pins": list(spec.pins)}) + "\n")
    return PinEnv(spec, path, cold=True, ready_s=time.perf_counter() - start)


def _build_venv(spec: PinEnvSpec, path: Path, checkout: Path, log: Path) -> None:
    base = getattr(sys, "_base_executable", sys.executable)
    _step(log, [base, "-m", "venv", str(path)])
    python = [str(path / "bin" / "python")]
    _pip(log, python, [*spec.pins, *other_requirements(spec.pins)], spec)
    _pip(log, python, ["--no-deps", "-e", str(checkout)], spec)


def other_requirements(pins: Sequence[str]) -> list[str]:
    """The installed harness's requirements (no extras), less those on a pinned package."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pinned = {canonicalize_name(Requirement(p).name) for p in pins}
    try:
        declared = requires("mlx-harness") or []
    except PackageNotFoundError:
        return []
    kept = []
    for text in declared:
        req = Requirement(text)
        if req.marker is not None and "extra" in str(req.marker):
            continue
        if req.marker is not None and not req.marker.evaluate():
            continue
        if canonicalize_name(req.name) not in pinned:
            kept.append(text.split(";")[0].strip())
    return kept


def _pip(log: Path, python: list[str], args: list[str], spec: PinEnvSpec) -> None:
    where: list[str] = []
    if spec.index_url:
        where += ["--index-url", spec.index_url]
    if spec.find_links:
        where += ["--find-links", spec.find_links]
        if not spec.index_url:
            where.append("--no-index")
    cmd = [*python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
    _step(log, [*cmd, *where, *args])


def _step(log: Path, cmd: list[str]) -> None:
    with log.open("a") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        try:
            done = subprocess.run(
                cmd, stdout=out, stderr=subprocess.STDOUT, timeout=INSTALL_TIMEOUT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PinEnvError(f"{cmd[0]}: {exc}; see {log}") from None
    if done.returncode != 0:
        tail = _last_error(log)
        raise PinEnvError(f"installing failed ({tail}); the full output is in {log}")


def _last_error(log: Path) -> str:
    lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR")]
    text = (errors or lines or ["no output"])[0]
    return text[:300]


def resolved_versions() -> dict[str, str]:
    """Every distribution this process's Python sees, ``name -> version`` (first on the path
    wins, as imports do): what a pin set actually ran with."""
    from importlib.metadata import distributions

    from packaging.utils import canonicalize_name

    found: dict[str, str] = {}
    for dist in distributions():
        name = dist.metadata["Name"]
        if name:
            found.setdefault(canonicalize_name(name), dist.version)
    return dict(sorted(found.items()))
