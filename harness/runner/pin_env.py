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

A pin set may follow something instead of (or besides) pins (:class:`Track`): ``lock``
installs exactly the checkout's ``uv.lock`` (``uv export``), ``latest`` the harness's
requirements and pins resolved to their newest releases now (``uv pip compile``). Either way the
exact list is written to the folder's ``requirements.txt``, installed as it is, and keys the
environment, so ``latest`` gets a new one when something new is released. Both need uv.

The installer is chosen once per build: ``uv`` when there is one (beside the running Python,
else on ``PATH``), else ``python -m venv`` and pip; ``MLX_HARNESS_INSTALLER=uv|pip`` decides
instead. A uv-built venv has no pip in it (nothing runs pip there after the build).

An environment's folder is ``<cache>/envs/<pin-set>-<hash>``; the hash covers the pins, the
kind, the index options, the Python and the harness's version and dependency declaration
(pyproject.toml: an editable install follows the checkout's code, so only what it declares
needs a new environment). It leaves out the installer: an environment pip built stays valid
when uv appears (both install the same pins; the resolved versions are recorded with each
run). A marker file written last says the environment is complete and which installer built
it; a folder without a readable one is removed and built again.
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
from typing import Any

from harness.models.cache_dir import cache_root

READY = ".mlx-harness-env-ready"
REQUIREMENTS = "requirements.txt"  # what a tracking pin set resolved to, installed as it is
INSTALL_LOG = "install.log"
INSTALL_TIMEOUT_S = 1800.0
INSTALLER_ENV = "MLX_HARNESS_INSTALLER"


class EnvKind(str, Enum):
    VENV = "venv"
    OVERLAY = "overlay"


class Installer(str, Enum):
    """What builds an environment: uv (``uv venv`` + ``uv pip``) or ``venv`` + pip."""

    UV = "uv"
    PIP = "pip"


class PinEnvError(RuntimeError):
    """An environment that could not be built: one line naming the log with the installer's
    output (or a bad ``$MLX_HARNESS_INSTALLER``)."""


class Track(str, Enum):
    """What a pin set follows instead of (or besides) its pins."""

    LOCK = "lock"  # exactly the checkout's uv.lock
    LATEST = "latest"  # the newest release of every dependency, resolved at each build


@dataclass(frozen=True)
class PinEnvSpec:
    """What an environment holds: the pin set's name and pins, how and where from."""

    name: str
    pins: tuple[str, ...]
    kind: EnvKind = EnvKind.VENV
    index_url: str | None = None
    find_links: str | None = None  # a folder or URL of wheels/sdists, searched with no index
    track: Track | None = None
    extras: tuple[str, ...] = ()  # the harness's extras (vlm, audio, all, ...)
    # pins added for the pinned mlx-lm (harness.runner.pin_resolve), each "pin (why)"; they
    # are in ``pins`` too
    chosen: tuple[str, ...] = ()

    def declared_pins(self) -> tuple[str, ...]:
        """The pins the pin set itself gives (``pins`` less those chosen for it)."""
        added = {line.split(" ", 1)[0] for line in self.chosen}
        return tuple(p for p in self.pins if p not in added)


@dataclass(frozen=True)
class InstallTool:
    """The installer of one build, and the uv executable when it is uv."""

    installer: Installer
    uv: str | None = None


@dataclass(frozen=True)
class PinEnv:
    """A complete environment, how long making it ready took (seconds) and what built it."""

    spec: PinEnvSpec
    path: Path
    cold: bool  # built now (True) or found complete in the cache (False)
    ready_s: float
    installer: Installer = Installer.PIP  # from the marker; markers without one were pip's

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


def env_key(spec: PinEnvSpec, checkout: Path, requirements: str | None = None) -> str:
    """sha256 of everything that decides what the environment holds (not the installer);
    ``requirements``: the exact list a tracking pin set resolved to (its content decides)."""
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
    if spec.track is not None or spec.extras:  # keys of plain pin sets stay as they were
        facts["track"] = spec.track.value if spec.track else None
        facts["extras"] = sorted(spec.extras)
        facts["requirements_sha256"] = hashlib.sha256((requirements or "").encode()).hexdigest()
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def env_path(spec: PinEnvSpec, checkout: Path, requirements: str | None = None) -> Path:
    return envs_dir() / f"{spec.name}-{env_key(spec, checkout, requirements)[:16]}"


def installer_override(environ: Mapping[str, str]) -> Installer | None:
    """``$MLX_HARNESS_INSTALLER`` as an :class:`Installer`; None when unset or empty."""
    raw = environ.get(INSTALLER_ENV, "").strip()
    if not raw:
        return None
    try:
        return Installer(raw.lower())
    except ValueError:
        allowed = ", ".join(i.value for i in Installer)
        raise PinEnvError(
            f"{INSTALLER_ENV}={raw!r} is not an installer; set it to one of {allowed} or unset it"
        ) from None


def find_uv(environ: Mapping[str, str], python: str) -> str | None:
    """The uv beside ``python`` (a dev install puts it there), else the first on ``PATH``."""
    beside = Path(python).parent / "uv"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("uv", path=environ.get("PATH", os.defpath))


def choose_installer(
    environ: Mapping[str, str] | None = None, python: str = sys.executable
) -> InstallTool:
    """uv when it is found, else pip; ``$MLX_HARNESS_INSTALLER`` decides when it is set."""
    env = os.environ if environ is None else environ
    wanted = installer_override(env)
    uv = None if wanted is Installer.PIP else find_uv(env, python)
    if uv is not None:
        return InstallTool(Installer.UV, uv)
    if wanted is Installer.UV:
        raise PinEnvError(
            f"{INSTALLER_ENV}=uv but no uv is beside {python} or on PATH; "
            f"install it (pip install uv) or set {INSTALLER_ENV}=pip"
        )
    return InstallTool(Installer.PIP)


def ensure_env(
    spec: PinEnvSpec, checkout: Path | None = None, tool: InstallTool | None = None
) -> PinEnv:
    """The environment of ``spec``: reused when complete, else built now with ``tool`` (chosen
    by :func:`choose_installer` when None; :class:`PinEnvError` when the installer fails:
    its output is in the folder's install.log)."""
    root = checkout or checkout_root()
    start = time.perf_counter()
    chosen = tool or choose_installer()  # also reports a bad $MLX_HARNESS_INSTALLER on reuse
    exact = tracked_requirements(spec, root, chosen)
    path = env_path(spec, root, exact)
    built_by = _marker_installer(path)
    if built_by is not None:
        return PinEnv(spec, path, False, time.perf_counter() - start, built_by)
    if path.exists():
        shutil.rmtree(path)  # an earlier build that did not finish
    path.mkdir(parents=True)
    log = path / INSTALL_LOG
    listed = None
    if exact is not None:
        listed = path / REQUIREMENTS
        listed.write_text(exact)
    requirements = harness_requirements(spec.pins, spec.extras) if spec.kind is EnvKind.VENV else []
    for cmd in install_commands(spec, path, root, chosen, requirements, listed=listed):
        _step(log, cmd, chosen.installer)
    marker = {"name": spec.name, "pins": list(spec.pins), "installer": chosen.installer.value}
    partial = path / f"{READY}.partial"
    partial.write_text(json.dumps(marker) + "\n")
    os.replace(partial, path / READY)
    return PinEnv(spec, path, True, time.perf_counter() - start, chosen.installer)


def _marker_installer(path: Path) -> Installer | None:
    """Who built the complete environment at ``path``; None when it is not complete."""
    try:
        marker = json.loads((path / READY).read_text())
        return Installer(marker.get("installer", Installer.PIP.value))
    except (OSError, ValueError, AttributeError):
        return None


def install_commands(
    spec: PinEnvSpec,
    path: Path,
    checkout: Path,
    tool: InstallTool,
    requirements: Sequence[str] = (),
    python: str = sys.executable,
    base: str | None = None,
    listed: Path | None = None,
) -> list[list[str]]:
    """The commands that build ``spec`` at ``path``, in order (nothing is run).

    ``requirements`` are the harness's other requirements (a venv's), ``python`` the running
    interpreter (an overlay's), ``base`` the interpreter a venv is made from, ``listed`` the
    file of exact requirements a tracking pin set resolved to (installed instead of both)."""
    made_from = base if base is not None else str(getattr(sys, "_base_executable", sys.executable))
    uv = tool.uv if tool.installer is Installer.UV else None
    if tool.installer is Installer.UV and uv is None:
        raise ValueError("an InstallTool for uv needs the uv executable")
    where: list[str] = []
    if spec.index_url:  # uv's name for pip's --index-url (which it keeps, deprecated)
        where += ["--index-url" if uv is None else "--default-index", spec.index_url]
    if spec.find_links:
        where += ["--find-links", spec.find_links]
        if not spec.index_url:
            where.append("--no-index")
    venv_python = str(path / "bin" / "python")
    if spec.kind is EnvKind.OVERLAY:
        site = str(path / "site")
        return [_install(uv, python, [*where, "--target", site, "--no-deps", *spec.pins])]
    if uv is not None:  # --allow-existing: the folder already holds install.log
        make_venv = [uv, "venv", "--no-project", "--allow-existing", "--python", made_from]
    else:
        make_venv = [made_from, "-m", "venv"]
    wanted = ["-r", str(listed)] if listed is not None else [*spec.pins, *requirements]
    return [
        [*make_venv, str(path)],
        _install(uv, venv_python, [*where, *wanted]),
        _install(uv, venv_python, [*where, "--no-deps", "-e", str(checkout)]),
    ]


def _install(uv: str | None, python: str, args: Sequence[str]) -> list[str]:
    """``uv pip install`` (with uv) or ``python -m pip install`` into ``python``'s site."""
    if uv is not None:
        return [uv, "pip", "install", "--python", python, *args]
    return [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", *args]


def harness_requirements(pins: Sequence[str], extras: Sequence[str] = ()) -> list[str]:
    """The installed harness's requirements for this platform, with those of ``extras`` (an
    extra naming others, as ``all`` does, brings theirs), less those on a pinned package."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pinned = {canonicalize_name(Requirement(p).name) for p in pins}
    try:
        declared = [Requirement(text) for text in requires("mlx-harness") or []]
    except PackageNotFoundError:
        return []
    wanted, grown = set(extras), True
    while grown:  # mlx-harness[vlm,audio] under the extra "all": take vlm's and audio's too
        before = len(wanted)
        for req in declared:
            if canonicalize_name(req.name) == "mlx-harness" and _applies(req, wanted):
                wanted |= req.extras
        grown = len(wanted) > before
    kept = []
    for req in declared:
        name = canonicalize_name(req.name)
        if name != "mlx-harness" and name not in pinned and _applies(req, wanted):
            kept.append(str(req).split(";")[0].strip())
    return list(dict.fromkeys(kept))


def _applies(req: Any, extras: set[str]) -> bool:
    """Whether a requirement holds here: its marker true with no extra, or with one of
    ``extras`` (a requirement of an extra not wanted does not)."""
    if req.marker is None:
        return True
    if "extra" not in str(req.marker):
        return bool(req.marker.evaluate())
    return any(req.marker.evaluate({"extra": extra}) for extra in extras)


def tracked_requirements(spec: PinEnvSpec, checkout: Path, tool: InstallTool) -> str | None:
    """The exact requirements (``name==version`` lines) of a tracking pin set: the checkout's
    uv.lock exported (``lock``), or the harness's requirements and the pins resolved now to
    their newest releases (``latest``); None for a plain pin set. Both need uv."""
    if spec.track is None:
        return None
    if tool.uv is None:
        raise PinEnvError(
            f"track: {spec.track.value} needs uv (pip can neither export a uv lock nor resolve "
            f"without installing); install it (pip install uv), or unset {INSTALLER_ENV}=pip"
        )
    where: list[str] = []
    if spec.index_url:
        where += ["--default-index", spec.index_url]
    if spec.find_links:
        where += ["--find-links", spec.find_links] + ([] if spec.index_url else ["--no-index"])
    extras = [arg for extra in spec.extras for arg in ("--extra", extra)]
    if spec.track is Track.LOCK:
        lock = checkout / "uv.lock"
        if not lock.is_file():
            raise PinEnvError(f"track: lock needs {lock}, which is missing; run `make lock`")
        cmd = [tool.uv, "export", "--frozen", "--no-hashes", "--no-emit-project", "--no-header"]
        cmd += ["--format", "requirements-txt", "--project", str(checkout), *extras]
        return _resolved(cmd, None, "exporting uv.lock")
    wanted = "\n".join([*spec.pins, *harness_requirements(spec.pins, spec.extras)]) + "\n"
    made_from = str(getattr(sys, "_base_executable", sys.executable))
    cmd = [tool.uv, "pip", "compile", "-", "--python", made_from, "--no-header", "--no-annotate"]
    return _resolved([*cmd, *where], wanted, "resolving the newest releases")


def _resolved(cmd: list[str], stdin: str | None, doing: str) -> str:
    """The output of a uv command that resolves requirements; PinEnvError with uv's first error
    line when it fails (no index reachable, a conflict, ...)."""
    try:
        done = subprocess.run(
            cmd, input=stdin, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PinEnvError(f"{doing}: {cmd[0]}: {exc}") from None
    if done.returncode != 0:
        raise PinEnvError(f"{doing} failed ({first_error(done.stderr)})")
    return done.stdout


def _step(log: Path, cmd: list[str], installer: Installer) -> None:
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
        raise PinEnvError(
            f"installing with {installer.value} failed ({tail}); the full output is in {log}"
        )


def _last_error(log: Path) -> str:
    return first_error(log.read_text(errors="replace"))


def first_error(output: str) -> str:
    """The first error of an installer's output (pip's ``ERROR:``, uv's ``error:`` with its
    ``cause:`` lines), else its first line, on one line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for at, line in enumerate(lines):
        if line.startswith(("ERROR", "error:")):
            causes = []
            for following in lines[at + 1 :]:
                if not following.startswith("cause:"):
                    break
                causes.append(following)
            return "; ".join([line, *causes])[:300]
    return (lines or ["no output"])[0][:300]


def resolved_versions() -> dict[str, str]:
    """Every distribution this process's Python sees: what a pin set actually ran with."""
    from harness.probe.source import installed_versions

    return installed_versions()
