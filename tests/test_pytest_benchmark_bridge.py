"""The pytest-benchmark bridge through pytester: ``mlx_model`` loads once per session, each
benchmark becomes a ``benchmark`` case in run.jsonl and report.md, pytest-benchmark's machine
info carries the harness fingerprint, and a bad model name is one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.core.types import Status
from harness.pytest_plugin.benchmark_bridge import benchmark_results, blas_warning
from harness.results.store import load_run

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pytest_benchmark" / "test_sampler.py"

COUNTING = """
LOADS = []

def test_plain(benchmark):
    assert benchmark(sum, range(100)) == 4950

def test_model_once(benchmark, mlx_model, mlx_model_cache):
    first = mlx_model("zoo/llama")
    assert mlx_model("zoo/llama") is first and len(mlx_model_cache.loaded) == 1
    ids = first.tokenizer.encode("hello")
    benchmark(first.loaded.decode, ids)
"""


@pytest.fixture(autouse=True)
def _real_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytester moves HOME: keep the cache where the embedded models were prepared."""
    from harness.models.cache_dir import CACHE_ENV, cache_root

    monkeypatch.setenv(CACHE_ENV, str(cache_root()))


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, Path]:
    reports = pytester.path / "reports"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--benchmark-min-rounds=3", "--benchmark-max-time=0.05",
        "--report-dir", str(reports), "--run-id", "bench", *args,
    )  # fmt: skip
    return result, reports / "bench"


@pytest.mark.slow
def test_benchmarks_are_cases_of_the_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_counting=COUNTING)
    result, run_dir = _run(pytester, "--benchmark-json", "bench.json")
    result.assert_outcomes(passed=2)
    run = load_run(run_dir)
    by_test = {r.point["test"]: r for r in run.results}
    assert set(by_test) == {"test_plain", "test_model_once"}
    assert by_test["test_model_once"].model == "zoo/llama"
    assert by_test["test_plain"].model == "python"
    for case in run.results:
        assert case.scenario == "benchmark" and case.status is Status.PASSED
        (metric,) = case.metrics
        assert metric.name == "benchmark.time_s" and len(metric.samples) >= 3
        assert all(s > 0 for s in metric.samples)
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "test_model_once" in report and "benchmark.time_s" in report
    machine = json.loads((pytester.path / "bench.json").read_text())["machine_info"]
    assert machine["mlx_harness"]["cores"] == run.machine.cores


@pytest.mark.slow
def test_the_example_is_recorded_and_reported(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(EXAMPLE, pytester.path / "test_sampler.py")
    monkeypatch.setenv("BENCH_MODEL", "zoo/llama")
    result, run_dir = _run(pytester)
    result.assert_outcomes(passed=2)
    if blas_warning("bundled") is not None:  # OpenBLAS installed, not preloaded in pytest
        result.stdout.fnmatch_lines(["*mlx_model: this pytest runs MLX with *LD_PRELOAD=*"])
    medians = {r.point["test"]: r.metrics[0].median for r in load_run(run_dir).results}
    assert set(medians) == {"test_custom_sampler_decode", "test_request_handler"}
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    for test in medians:
        assert f"test={test}" in report or test in report


@pytest.mark.slow
def test_an_unknown_model_is_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(mlx_model):\n    mlx_model('no-such-model')\n")
    result, run_dir = _run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*'no-such-model' is neither an embedded model*"])
    assert "Traceback" not in result.stdout.str()
    assert not run_dir.exists()  # no benchmark, no suite: no run is opened


def _bench(data: list[float], *, error: bool = False) -> Any:
    return SimpleNamespace(
        name="test_a[x]",
        fullname="t.py::test_a[x]",
        param="x",
        group=None,
        extra_info={"note": object()},
        iterations=2,
        has_error=error,
        stats=SimpleNamespace(data=data),
    )


@pytest.mark.parametrize(
    ("data", "error", "status"),
    [([0.5, 0.25], False, Status.PASSED), ([0.5], True, Status.FAILED), ([], False, None)],
)
def test_benchmark_results(data: list[float], error: bool, status: Status | None) -> None:
    found = list(benchmark_results([_bench(data, error=error)], {}, "2026-01-01T00:00:00"))
    if status is None:
        assert found == []  # no rounds (--benchmark-disable): nothing to record
        return
    ((case, result),) = found
    assert result.status is status and result.metrics[0].samples == tuple(data)
    assert case.case_id == "t.py::test_a[x]" and result.params == {
        "test": "test_a[x]",
        "param": "x",
    }
    assert isinstance(result.artifacts["extra_info"]["note"], str)  # JSON-safe
    assert result.artifacts["blas"]  # which BLAS this process ran with


@pytest.mark.slow
def test_a_benchmark_compares_with_a_baseline(pytester: pytest.Pytester) -> None:
    """Two runs of one benchmark: the second, given the first as --baseline, judges the case
    like any other (a verdict in the record's comparison and the report's section)."""
    pytester.makepyfile("def test_sum(benchmark):\n    benchmark(sum, range(1000))\n")
    reports = pytester.path / "reports"
    common = ["-p", "no:cacheprovider", "--benchmark-min-rounds=5", "--report-dir", str(reports)]
    pytester.runpytest_subprocess(*common, "--run-id", "a").assert_outcomes(passed=1)
    second = pytester.runpytest_subprocess(
        *common, "--run-id", "b", "--baseline", str(reports / "a")
    )
    second.assert_outcomes(passed=1)
    report = (reports / "b" / "report.md").read_text(encoding="utf-8")
    assert "Comparison with baseline" in report and "test_sum" in report
