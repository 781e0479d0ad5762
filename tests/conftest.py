"""Shared fixtures: a fake model directory and a real tiny mlx-lm model built in the test run.

MLX runs in this process on OpenBLAS where the harness's workers would (Linux with it
installed, not disabled): loaded here, before any test imports ``mlx.core``. With MLX's bundled
reference BLAS the in-process real-model tests took 4-6x longer (Whisper tiny.en 11 s a clip)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from tests.blas_preload import preload_in_process

PRELOADED_BLAS = preload_in_process(os.environ)
# pytester's in-process runs drop the modules first imported inside them when they end, and a C
# extension such as numpy's cannot be imported twice in one process ("cannot load module more
# than once per process"): the third run of a test that judges gates (numpy's bootstrap) failed
# so when numpy came first from a pytester run. Loaded here, it stays for the whole session.
import numpy  # noqa: E402, F401

# Test data is read by tests, never collected: results/data/golden holds the suite its records
# came from, whose fake models are not there.
collect_ignore_glob = ["*/data/*"]


@pytest.fixture(scope="session")
def preloaded_blas() -> Path | None:
    """The OpenBLAS this process loaded for MLX (None: none available, or disabled)."""
    return PRELOADED_BLAS


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real tiny random-weight llama (mlx-lm format), generated once for the run (~2 s)."""
    from tests.zoo_shared import zoo_family

    return zoo_family(tmp_path_factory, "llama")


@pytest.fixture()
def fake_model(tmp_path: Path) -> Path:
    return write_fake_model(tmp_path / "fake-model", per_token_s=0.001)


@pytest.fixture()
def write_suite(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write a suite file into tmp_path and return its path."""

    def write(text: str, name: str = "t.suite.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture(autouse=True, scope="session")
def _dirty_machine_allowed() -> Iterator[None]:
    """Tests run beside other work (parallel test jobs, a shared machine): a test's gates and
    comparisons are judged even when the machine was busy while it measured. The guard's own
    tests (tests/runner/test_sample_guard.py) delete the variable and plant a busy machine.
    Session-wide, so session fixtures that run suites see it too."""
    from harness.drive.exit_rules import ALLOW_DIRTY_ENV

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ALLOW_DIRTY_ENV, "1")
        yield


@pytest.fixture(autouse=True, scope="session")
def _not_an_xdist_worker_below() -> Iterator[None]:
    """`make test` runs the tests over pytest-xdist workers, which set ``PYTEST_XDIST_*`` in
    their environment. A pytest a test starts (pytester, a subprocess) inherits it and believes
    it is a worker itself: pytest-benchmark then disables every benchmark. Those processes are
    not workers, so the variables go (xdist reads its worker's input from ``config``, not them)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n.startswith("PYTEST_XDIST_")]:
            patch.delenv(name)
        yield


# The longest test modules, started first: `make test`'s xdist (--dist loadscope) hands whole
# modules to the workers in queue order, so a long module handed out late leaves one worker
# running it alone at the end. Longest first is the classic fix (LPT); a module missing from the
# list runs after these, in collection order. xdist's own reorder (by the number of tests in a
# module, longest-first only for table modules) is turned off below, or it would undo this
# order: it did until 2026-11-29. Wall seconds from `--durations=0`, three workers, 2026-11-29.
LONGEST_FIRST = (
    "tests/report/test_browser_escaping.py",  # 144 s
    "tests/test_shipped_suites.py",  # 105 s
    "tests/test_pytest_plugin.py",  # 89 s
    "tests/runner/test_server_lifecycle.py",  # 74 s
    "tests/test_pytest_xdist_parts.py",  # 73 s
    "tests/scenarios/test_hostile_servers.py",  # 73 s
    "tests/results/test_store.py",  # 70 s
    "tests/test_pytest_benchmark_bridge.py",  # 67 s
    "tests/spec/test_hostile_suites.py",  # 63 s
    "tests/runner/test_interrupts.py",  # 60 s
    "tests/test_exit_rules_drivers.py",  # 53 s
    "tests/backends/test_mlx_audio.py",  # 49 s
    "tests/runner/test_peak_prediction.py",  # 48 s
    "tests/test_cli_bisect.py",  # 47 s
    "tests/runner/test_active_run.py",  # 46 s
    "tests/test_cli_pin_sets.py",  # 46 s
    "tests/report/test_escape.py",  # 44 s
    "tests/backends/test_mlx_lm.py",  # 42 s
    "tests/scenarios/test_api_contracts.py",  # 42 s
    "tests/test_exit_codes.py",  # 41 s
    "tests/runner/test_pin_env_tracks.py",  # 40 s
    "tests/test_cli_merge.py",  # 39 s
    "tests/scenarios/test_prompt_cache.py",  # 38 s
    "tests/report/test_publish.py",  # 36 s
    "tests/scenarios/test_cancellation.py",  # 33 s
    "tests/runner/test_fault_matrix.py",  # 32 s
    "tests/scenarios/test_quant_sweep.py",  # 31 s
    "tests/runner/test_preflight.py",  # 28 s
    "tests/runner/test_pin_env.py",  # 26 s
    "tests/spec/test_selectors.py",  # 25 s
)


def pytest_configure(config: pytest.Config) -> None:
    """xdist's loadscope queues modules by their number of tests unless told not to: the
    order below is the one wanted (this conftest is loaded by the controller, which
    schedules)."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built (every test module, the harness, mlx) lives to the end: frozen,
    the cyclic collector stops walking it on each full collection, and collects less often
    (a worker holds ~1 GB of objects). Four in-process modules: GC 2.6 -> 1.1 s of CPU."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    root = config.rootpath

    def place(item: pytest.Item) -> int:
        if not item.path.is_relative_to(root):
            return len(rank)
        return rank.get(item.path.relative_to(root).as_posix(), len(rank))

    items.sort(key=place)  # stable: every module keeps its own order
