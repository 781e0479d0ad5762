"""The lazy llama-server build: made once, before the first case served by it, outside the
case's time; a build that fails is that case's one-line load error, and the run goes on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.core.types import Case, ModelRef, ModelSource, ServerRef, Status
from harness.models import llama_server
from harness.runner import prerequisites
from harness.runner.active_run import ActiveRun
from harness.runner.prerequisites import Prepared, ensure_llama_server, needs_llama_server


def _model(server: ServerRef | None, backend: str = "http") -> ModelRef:
    return ModelRef("m", ModelSource.PATH, "/m", backend, (), "/m", server)


# (id, model, needs a llama-server)
NEEDS = [
    ("llama_server", _model(ServerRef(engine="llama_server")), True),
    ("mlx_lm_server", _model(ServerRef(engine="mlx_lm")), False),
    ("url", _model(ServerRef(url="http://127.0.0.1:1/v1")), False),
    ("in_process", _model(None, "mlx_lm"), False),
]


@pytest.mark.parametrize(("model", "needs"), [n[1:] for n in NEEDS], ids=[n[0] for n in NEEDS])
def test_needs_llama_server(model: ModelRef, needs: bool) -> None:
    assert needs_llama_server(model) is needs


@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No llama-server anywhere: an empty cache, no variable, nothing on PATH."""
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(llama_server.SERVER_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    return tmp_path


def test_a_found_server_is_not_built(monkeypatch: pytest.MonkeyPatch, no_server: Path) -> None:
    binary = no_server / "llama-server"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setenv(llama_server.SERVER_ENV, str(binary))
    monkeypatch.setattr(llama_server, "build", lambda **_: pytest.fail("built again"))
    lines: list[str] = []
    assert ensure_llama_server(lines.append) == Prepared()
    assert lines == []


def test_a_missing_server_is_built_with_progress_and_its_time(
    monkeypatch: pytest.MonkeyPatch, no_server: Path
) -> None:
    built = no_server / "cache" / "llama-server"

    def build(*, on_step, force=False):  # type: ignore[no-untyped-def]
        on_step("configuring with cmake")
        on_step("building llama-server")
        return built

    monkeypatch.setattr(llama_server, "build", build)
    lines: list[str] = []
    prepared = ensure_llama_server(lines.append)
    assert prepared.problem is None and prepared.seconds >= 0
    assert lines[0].startswith("llama-server: not built yet")
    assert lines[1:3] == ["llama.cpp: configuring with cmake", "llama.cpp: building llama-server"]
    assert lines[3].startswith("llama-server: built in ") and str(built) in lines[3]


def test_a_failed_build_is_one_line(monkeypatch: pytest.MonkeyPatch, no_server: Path) -> None:
    def build(*, on_step, force=False):  # type: ignore[no-untyped-def]
        raise llama_server.LlamaServerBuildError("cmake configure failed: no compiler (see log)")

    monkeypatch.setattr(llama_server, "build", build)
    prepared = ensure_llama_server(lambda _: None)
    assert prepared.problem == (
        "llama-server could not be built: cmake configure failed: no compiler (see log)"
    )


def test_a_wrong_variable_is_the_problem_not_a_build(
    monkeypatch: pytest.MonkeyPatch, no_server: Path
) -> None:
    monkeypatch.setenv(llama_server.SERVER_ENV, str(no_server / "nowhere"))
    monkeypatch.setattr(llama_server, "build", lambda **_: pytest.fail("built"))
    prepared = ensure_llama_server(lambda _: None)
    assert prepared.problem is not None and "not an executable file" in prepared.problem


def _served_case(key: str) -> Case:
    server = ServerRef(engine="llama_server")
    model = ModelRef(key, ModelSource.PATH, "/m.gguf", "http", (), "/m.gguf", server)
    return Case(
        case_id=f"t::{key}::load",
        suite="t",
        suite_path="t.suite.yaml",
        model=model,
        scenario="load",
        params={"reloads": 0},
        repeats=1,
        timeout_s=20.0,
    )


def test_the_session_builds_once_and_keeps_the_build_out_of_the_case_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[str] = []
    build_s = 0.3

    def ensure(say):  # type: ignore[no-untyped-def]
        calls.append("ensure")
        say("llama-server: not built yet")
        time.sleep(build_s)
        return Prepared(build_s, "llama-server could not be built: cmake: no compiler")

    monkeypatch.setattr("harness.runner.active_run.ensure_llama_server", ensure)
    said: list[str] = []
    session = ActiveRun(tmp_path / "reports", [], run_id="r1", say=said.append)
    try:
        start = time.perf_counter()
        first = session.run_case(_served_case("a"))
        elapsed = time.perf_counter() - start
        second = session.run_case(_served_case("b"))  # another model: no second build
    finally:
        session.close_worker()
    assert calls == ["ensure"] and said == ["llama-server: not built yet"]
    for result in (first, second):
        assert result.status is Status.ERRORED
        assert result.reason == "llama-server could not be built: cmake: no compiler"
    # the build's seconds are the set-up's: the case's duration leaves them out
    assert first.duration_s <= elapsed - build_s + 1e-6
    run = session.finish()
    assert [r.status for r in run.results] == [Status.ERRORED, Status.ERRORED]


def test_prerequisites_module_names_the_engine_the_schema_uses() -> None:
    from harness.spec.schema import ServeEngine

    assert ServeEngine.LLAMA_SERVER.value == prerequisites.LLAMA_SERVER_ENGINE
