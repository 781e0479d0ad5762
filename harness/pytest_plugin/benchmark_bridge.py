"""pytest-benchmark with a real job: a model loaded once per session, timings in the run record.

- ``mlx_model(name)`` (a fixture returning a factory) loads an embedded model (``zoo/llama``,
  ``smollm2-135m-instruct-f32``), a model folder, or a model of a suite
  (``mlx_model("tiny-llama", suite="suites/smoke.suite.yaml")``) through the harness's backend,
  in this process, once per pytest session; the test gets a :class:`BenchModel` (the backend's
  loaded model, and mlx-lm's ``model`` and ``tokenizer``).
- pytest-benchmark's machine info gains ``mlx_harness``: the harness's machine fingerprint
  (``pytest_benchmark_update_machine_info``).
- When the session ends, every benchmark with timings becomes a ``benchmark`` case
  (:mod:`harness.scenarios.benchmark`) of the harness run: the same ``run.jsonl``,
  comparison with ``--baseline`` and report as suite cases (a session without suite cases opens
  a run for them). The case is named by the test's node id, its model is the one the test
  loaded through ``mlx_model`` (``python`` when none), its samples are pytest-benchmark's rounds.

Registered by :mod:`harness.pytest_plugin`; the pytest-benchmark hooks are optional, so without
pytest-benchmark (``pip install 'mlx-harness[benchmark]'``) only the fixture is there.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from harness.core.types import (
    Case,
    CaseResult,
    JSONValue,
    Metric,
    ModelRef,
    ModelSource,
    Status,
    Unit,
)

SUITE = "pytest-benchmark"
NO_MODEL = "python"
MODELS_USED = pytest.StashKey[list[str]]()


class ModelNotFound(Exception):
    """A name ``mlx_model`` cannot resolve or load; the message is one line with the fix."""


@dataclass(frozen=True)
class BenchModel:
    """A model loaded through the harness backend ``backend`` from ``path``."""

    name: str
    path: Path
    backend: str
    loaded: Any  # the backend's loaded model (LoadedModel: encode, decode, stream_tokens, ...)
    load_s: float
    device: str
    blas: str = "unknown"  # the BLAS this process has mapped (the benchmark's speed depends on it)

    @property
    def model(self) -> Any:
        """mlx-lm's model (``mlx.nn.Module``)."""
        return self.loaded.model

    @property
    def tokenizer(self) -> Any:
        """mlx-lm's tokenizer wrapper."""
        return self.loaded.tokenizer


@dataclass
class ModelCache:
    """Models loaded in this session, by (name, suite); lives in a session-scoped fixture."""

    loaded: dict[tuple[str, str | None], BenchModel] = field(default_factory=dict)

    def get(self, name: str, suite: str | None) -> BenchModel:
        key = (name, suite)
        if key not in self.loaded:
            self.loaded[key] = load_model(name, suite)
        return self.loaded[key]


def resolve(name: str, suite: str | None) -> tuple[Path, str]:
    """The folder and backend of ``name``: a suite's model, an embedded model, or a folder."""
    if suite is not None:
        from harness.spec.errors import SuiteInvalid
        from harness.spec.loader import load_suite
        from harness.spec.plan import plan

        try:
            cases = plan(load_suite(Path(suite)))
        except SuiteInvalid as exc:
            raise ModelNotFound(str(exc)) from None
        for case in cases:
            if case.model.key == name and case.model.path is not None:
                return Path(case.model.path), case.model.backend
        raise ModelNotFound(f"{suite}: no local model named {name!r}; check its `models:`")
    from harness.models.catalog import find_embedded

    embedded = find_embedded(name)
    if embedded is not None:
        if not embedded.prepared:
            raise ModelNotFound(f"{name} is not prepared; run `mlx-harness models prepare {name}`")
        return embedded.path, "mlx_lm"
    path = Path(name).expanduser()
    if path.is_dir():
        return path, "mlx_lm"
    raise ModelNotFound(
        f"{name!r} is neither an embedded model (`mlx-harness models list`) nor a model folder"
    )


def load_model(name: str, suite: str | None) -> BenchModel:
    from harness.backends import BACKENDS
    from harness.backends.base import BackendError
    from harness.backends.mlx_runtime import blas_in_use

    path, backend = resolve(name, suite)
    try:
        loaded, info = BACKENDS.get(backend).load(path)
    except BackendError as exc:
        raise ModelNotFound(f"{name} could not be loaded: {exc}") from None
    return BenchModel(name, path, backend, loaded, info.load_s, info.device, blas_in_use())


def blas_warning(blas: str) -> str | None:
    """Why this process's MLX is slower than the harness's workers, when it is: they preload
    OpenBLAS for MLX's CPU backend, a running pytest cannot any more."""
    import os

    from harness.runner.blas import openblas_library

    library = openblas_library(os.environ)
    if library is None or blas.startswith("openblas"):
        return None
    return (
        f"mlx_model: this pytest runs MLX with {blas}, the harness's workers with OpenBLAS "
        f"(10-70x on float32 matmuls); run LD_PRELOAD={library} pytest ... for their speed"
    )


@pytest.fixture(scope="session")
def mlx_model_cache() -> ModelCache:
    """The session's loaded models (use ``mlx_model``)."""
    return ModelCache()


@pytest.fixture
def mlx_model(
    request: pytest.FixtureRequest, mlx_model_cache: ModelCache
) -> Callable[..., BenchModel]:
    """``mlx_model(name, suite=None)``: the model, loaded once per session; the test's
    benchmark case in the harness record names it."""

    def get(name: str, suite: str | None = None) -> BenchModel:
        try:
            first = (name, suite) not in mlx_model_cache.loaded
            model = mlx_model_cache.get(name, suite)
        except ModelNotFound as exc:
            pytest.fail(str(exc), pytrace=False)
        request.node.stash.setdefault(MODELS_USED, []).append(name)
        warning = blas_warning(model.blas) if first else None
        if warning is not None:
            request.node.warn(pytest.PytestWarning(warning))
        return model

    return get


@pytest.hookimpl(optionalhook=True)
def pytest_benchmark_update_machine_info(
    config: pytest.Config, machine_info: dict[str, Any]
) -> None:
    """Our machine fingerprint beside pytest-benchmark's own."""
    import dataclasses
    import os

    from harness.runner.blas import planned_blas, worker_env
    from harness.runner.machine import machine

    fingerprint = machine(planned_blas(worker_env(os.environ)))
    machine_info["mlx_harness"] = dataclasses.asdict(fingerprint)


def benchmark_results(
    benchmarks: Iterable[Any], models: Mapping[str, list[str]], started_at: str
) -> Iterator[tuple[Case, CaseResult]]:
    """Each pytest-benchmark ``Metadata`` with timings as a ``benchmark`` case and its result."""
    from harness.backends.mlx_runtime import blas_in_use
    from harness.scenarios.benchmark import SCENARIO, TIME

    blas = blas_in_use()
    for bench in benchmarks:
        samples = tuple(float(s) for s in getattr(bench.stats, "data", ()) or ())
        if not samples:
            continue
        used = models.get(bench.fullname) or [NO_MODEL]
        model = ",".join(dict.fromkeys(used))
        point: dict[str, JSONValue] = {"test": str(bench.name)}
        extra = (("param", bench.param), ("group", bench.group))
        params: dict[str, JSONValue] = {**point, **{k: str(v) for k, v in extra if v}}
        case = Case(
            case_id=bench.fullname,
            suite=SUITE,
            suite_path=bench.fullname.split("::", 1)[0],
            model=ModelRef(key=model, source=ModelSource.PATH, location="", backend="python"),
            scenario=SCENARIO.name,
            params=params,
            point=point,
            repeats=len(samples),
            warmup=0,
        )
        status, reason = Status.PASSED, None
        if bench.has_error:
            status, reason = Status.FAILED, "the benchmarked code raised (pytest shows why)"
        artifacts = {
            "rounds": len(samples),
            "iterations": int(bench.iterations),
            "blas": blas,  # this process's: a pytest cannot preload OpenBLAS as workers do
            "extra_info": {str(k): _json(v) for k, v in (bench.extra_info or {}).items()},
        }
        result = CaseResult(
            case_id=case.case_id,
            suite=SUITE,
            model=model,
            scenario=SCENARIO.name,
            status=status,
            params=params,
            point=point,
            metrics=(Metric(TIME.name, Unit.SECONDS, samples),),
            reason=reason,
            artifacts=artifacts,
            duration_s=float(sum(samples) * int(bench.iterations)),
            started_at=started_at,
            scenario_version=SCENARIO.version,
        )
        yield case, result


def _json(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Record the session's benchmarks in the harness run before the run ends."""
    bench_session = getattr(session.config, "_benchmarksession", None)
    benchmarks = list(getattr(bench_session, "benchmarks", ()) or ())
    if not benchmarks:
        return
    from harness.pytest_plugin import active_run
    from harness.results.store import RunFileError

    models = {item.nodeid: item.stash.get(MODELS_USED, []) for item in session.items}
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    found = list(benchmark_results(benchmarks, models, started))
    if not found:
        return
    try:
        run = active_run(session.config)
    except (RunFileError, OSError) as exc:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"mlx-harness: benchmarks not recorded: {exc}")
        return
    for case, result in found:
        run.record_result(case, result)
