"""Probe and policy before load, in the session: blocks are skips with their reason and no
worker; warnings run and stay in the record; the memory estimate is recorded per case."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.backends.base import BackendCapability
from harness.backends.fake import write_fake_model
from harness.core.preflight_types import ContextSource, PolicyAction, WorkloadRecord
from harness.core.types import Case, ModelRef, ModelSource, Status
from harness.probe.machine import MemoryBudget
from harness.probe.memory import estimate_memory
from harness.probe.types import Capability
from harness.results.preflight_record import peak_check, warning_line
from harness.results.store import load_run
from harness.runner.active_run import ActiveRun
from harness.runner.preflight import (
    Preflighter,
    scenario_backend_needs,
    scenario_needs,
)
from harness.scenarios.base import Workload
from harness.scenarios.throughput import ThroughputParams
from tests.zoo_shared import zoo_family

GIB = 1024**3
PLENTY = MemoryBudget(total_bytes=64 * GIB, available_bytes=48 * GIB)
TIGHT = MemoryBudget(total_bytes=64 * GIB, available_bytes=10 * GIB)
ARCH = {
    "hidden_size": 64,
    "num_layers": 2,
    "num_heads": 4,
    "num_kv_heads": 2,
    "head_dim": 16,
    "intermediate_size": 128,
    "vocab_size": 256,
    "layer_kinds": ["full", "full"],
}
THROUGHPUT = {"prompt_tokens": 8, "gen_tokens": 4, "ignore_eos": True}


def _case(
    path: Path,
    scenario: str = "throughput",
    *,
    backend: str = "fake",
    key: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> Case:
    key = key or path.name
    if params is None:
        params = THROUGHPUT if scenario == "throughput" else {"reloads": 0}
    return Case(
        case_id=f"t::{key}::{scenario}",
        suite="t",
        suite_path="t.suite.yaml",
        model=ModelRef(key, ModelSource.PATH, str(path), backend, (), str(path)),
        scenario=scenario,
        params=dict(params),
        repeats=1,
        warmup=0,
        timeout_s=20.0,
    )


def _session(tmp_path: Path, budget: MemoryBudget = PLENTY) -> ActiveRun:
    return ActiveRun(tmp_path / "reports", [], run_id="r", memory_budget=budget)


# (id, what fake.json's "probe" declares, scenario, budget, status, action, reason start)
ROWS: list[tuple[str, dict[str, Any], str, MemoryBudget, Status, str, str]] = [
    (
        "capability_mismatch",
        {"capabilities": ["audio_in"]},
        "throughput",
        PLENTY,
        Status.SKIPPED,
        "block",
        "capability_mismatch: scenario needs text; model has audio_in",
    ),
    (
        "corrupt_files",
        {"problems": [["corrupt_model", "config.json: not a JSON object"]]},
        "load",
        PLENTY,
        Status.SKIPPED,
        "block",
        "corrupt_model: config.json: not a JSON object",
    ),
    (
        "bigger_than_the_machine",
        {"weights_bytes": 100 * GIB},
        "load",
        PLENTY,
        Status.SKIPPED,
        "block",
        "insufficient_memory: needs 100.",
    ),
    (
        "more_than_free_now_warns",
        {"weights_bytes": 20 * GIB},
        "throughput",
        TIGHT,
        Status.PASSED,
        "warn",
        "insufficient_memory: needs 20.",
    ),
    (
        "needs_conversion_warns",
        {"problems": [["needs_conversion", "GGUF beside config.json: import it"]]},
        "throughput",
        PLENTY,
        Status.PASSED,
        "warn",
        "needs_conversion: GGUF beside config.json",
    ),
    (
        "load_needs_no_capability",
        {"capabilities": ["audio_in"]},
        "load",
        PLENTY,
        Status.PASSED,
        "allow",
        "",
    ),
    ("plain_model_is_allowed", {}, "throughput", PLENTY, Status.PASSED, "allow", ""),
]


@pytest.mark.parametrize(
    ("declared", "scenario", "budget", "status", "action", "reason"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
def test_policy_decides_each_case_before_load(
    tmp_path: Path,
    declared: dict[str, Any],
    scenario: str,
    budget: MemoryBudget,
    status: Status,
    action: str,
    reason: str,
) -> None:
    # a blocked model would be SIGKILLed by its own load: a skip proves no worker loaded it
    blocked = action == "block"
    model = write_fake_model(tmp_path / "m", probe=declared, on_load="sigkill" if blocked else None)
    session = _session(tmp_path, budget)
    try:
        result = session.run_case(_case(model, scenario))
        started = session._live is not None and session._live.client is not None
    finally:
        session.close_worker()
    assert result.status is status, result.reason
    assert result.preflight is not None and result.preflight.action == action
    if blocked:
        assert (result.reason or "").startswith(reason)
        assert not started and not (session.run_dir / "logs" / "m.log").exists()
    elif action == "warn":
        assert result.reason is None
        assert (warning_line(result.preflight) or "").startswith(f"warn {reason}")
    else:
        assert result.preflight.code == "ok" and result.reason is None


def test_blocked_and_allowed_cases_of_one_model(tmp_path: Path) -> None:
    """A block skips only its case: the model's other cases still load and run."""
    model = write_fake_model(tmp_path / "m", probe={"capabilities": ["audio_in"]})
    session = _session(tmp_path)
    cases = [_case(model, s) for s in ("throughput", "load", "throughput")]
    cases[2] = dataclasses.replace(cases[2], case_id=cases[2].case_id + "[again]")  # ids unique
    results = [session.run_case(case) for case in cases]
    run = session.finish()
    assert [r.status for r in results] == [Status.SKIPPED, Status.PASSED, Status.SKIPPED]
    assert [r.status for r in run.results] == [r.status for r in results]
    assert run.results[0].reason == "capability_mismatch: scenario needs text; model has audio_in"
    assert list(run.probes) == ["m"]  # probed once, recorded once
    assert run.probes["m"]["capabilities"] == ["audio_in"]


def test_estimate_is_recorded_with_its_workload(tmp_path: Path) -> None:
    model = write_fake_model(tmp_path / "m", probe={"weights_bytes": 4096, "text": ARCH})
    session = _session(tmp_path)
    throughput = session.run_case(_case(model, "throughput"))
    load = session.run_case(_case(model, "load"))
    run = session.finish()
    assert [r.preflight for r in run.results] == [throughput.preflight, load.preflight]
    record = run.results[0].preflight
    assert record is not None and record.context_source is ContextSource.SCENARIO
    assert record.workload == WorkloadRecord(prompt_tokens=8, generated_tokens=4)
    assert record.needs == ("text",) and record.backend == "fake"
    memory = record.memory
    assert memory is not None
    probe = Preflighter().probe(_case(model))
    assert not isinstance(probe, str)
    expected = estimate_memory(probe, 12, prompt_tokens=8)
    assert memory.mlx_peak_bytes == expected.mlx_peak_bytes
    assert memory.total_bytes == expected.total_bytes
    assert (memory.context_tokens, memory.prompt_tokens) == (12, 8)
    assert memory.weights_bytes == 4096 and memory.kv_cache_bytes > 0
    assert memory.activation_bytes > 0
    # the fake backend measures no MLX peak: the prediction stands alone
    check = peak_check(run.results[0])
    assert check is not None and check.comparable and check.error is None
    # load declares no workload: the estimate is the policy's default context
    default = run.results[1].preflight
    assert default is not None and default.context_source is ContextSource.DEFAULT
    assert default.memory is not None and default.memory.context_tokens == 4096


def test_unknown_runner_backend_is_a_missing_dependency(tmp_path: Path) -> None:
    model = write_fake_model(tmp_path / "m")
    session = _session(tmp_path)
    result = session.run_case(_case(model, backend="mlx_nope"))
    session.finish()
    assert result.status is Status.SKIPPED
    assert (result.reason or "").startswith("missing_dependency: no runner backend 'mlx_nope'")


def test_library_backend_on_a_non_model_directory_is_blocked(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    session = _session(tmp_path)
    result = session.run_case(_case(empty, backend="mlx_lm"))
    session.finish()
    assert result.status is Status.SKIPPED
    assert (result.reason or "").startswith("corrupt_model: ") and "not a model" in result.reason


def test_backend_without_its_own_probe_runs_unjudged(tmp_path: Path) -> None:
    """Not a library backend and no probe of its own: recorded as not judged, then run."""
    model = tmp_path / "unreadable"
    model.mkdir()
    (model / "fake.json").write_text("{}")
    broken = write_fake_model(tmp_path / "broken")
    (broken / "fake.json").write_text("[1]")  # the fake's probe cannot read it
    session = _session(tmp_path)
    ok = session.run_case(_case(model))
    bad = session.run_case(_case(broken))
    session.finish()
    assert ok.preflight is not None and ok.preflight.action is PolicyAction.ALLOW
    assert bad.preflight is not None and bad.preflight.action is None
    assert "not a fake model" in (bad.preflight.note or "")
    assert bad.status is Status.ERRORED  # the load itself says what is wrong


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Mapping[str, Path]:
    return {name: zoo_family(tmp_path_factory, name) for name in ("qwen2_vl", "whisper", "llama")}


@pytest.mark.parametrize(
    ("family", "scenario", "action", "reason"),
    [
        (
            "whisper",
            "load",
            "block",
            "backend_mismatch: mlx-lm * cannot load model_type 'whisper'; the files call for "
            "mlx-audio",
        ),
        (
            "qwen2_vl",
            "throughput",
            "warn",
            "backend_mismatch: loaded with mlx-lm (its qwen2_vl module, without vision); "
            "the files call for mlx-vlm",
        ),
        ("llama", "throughput", "allow", "ok: ok"),
    ],
)
def test_suite_backend_against_the_files(
    zoo: Mapping[str, Path], family: str, scenario: str, action: str, reason: str
) -> None:
    """A suite's mlx_lm on a model the files say is another backend's: judged, never switched."""
    import fnmatch

    preflight = Preflighter(budget=PLENTY).check(_case(zoo[family], scenario, backend="mlx_lm"))
    assert preflight is not None and preflight.decision is not None
    assert preflight.decision.action.value == action
    assert fnmatch.fnmatchcase(preflight.reason, reason), preflight.reason
    assert preflight.backend == "mlx_lm"


def test_probe_is_read_once_per_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.backends.fake import FakeBackend

    model = write_fake_model(tmp_path / "m")
    calls: list[Path] = []
    original = FakeBackend.probe

    def counting(self: FakeBackend, path: Path):  # type: ignore[no-untyped-def]
        calls.append(path)
        return original(self, path)

    monkeypatch.setattr(FakeBackend, "probe", counting)
    preflighter = Preflighter(budget=PLENTY)
    for scenario in ("throughput", "load", "throughput"):
        preflighter.check(_case(model, scenario))
    assert calls == [model]


def test_an_unknown_scenario_needs_nothing() -> None:
    """The preflight of a case whose scenario is not registered judges no needs (the plan has
    already named the unknown scenario)."""
    assert scenario_needs(None) == frozenset() and scenario_backend_needs(None) == frozenset()


def test_the_workload_is_the_scenarios_own() -> None:
    from harness.scenarios import SCENARIOS

    params = ThroughputParams(prompt_tokens=100, gen_tokens=10)
    assert SCENARIOS.get("throughput").workload(params) == Workload(100, 10)


# A run record written before the probe-and-policy step (no "probe" events, no "preflight").
OLD_RUN = [
    {
        "event": "run_start",
        "schema_version": 1,
        "run_id": "old",
        "started_at": "2026-01-01T00:00:00+00:00",
        "machine": {
            "os": "Linux",
            "os_release": "6",
            "arch": "x86_64",
            "cpu": "cpu",
            "cores": 2,
            "memory_bytes": 1,
            "python": "3.11",
        },
        "packages": {},
        "git_sha": None,
        "suites": [],
    },
    {
        "event": "case",
        "result": {
            "case_id": "s::m::throughput",
            "suite": "s",
            "model": "m",
            "scenario": "throughput",
            "status": "passed",
            "metrics": [{"name": "memory.mlx_peak_bytes", "unit": "B", "samples": [1048576.0]}],
        },
    },
    {"event": "run_end", "finished_at": "2026-01-01T00:01:00+00:00"},
]


def test_old_run_records_still_load_and_render(tmp_path: Path) -> None:
    from harness.report import render
    from harness.report.memory import build

    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in OLD_RUN))
    run = load_run(path)
    assert run.probes == {} and run.results[0].preflight is None
    assert peak_check(run.results[0]) is None
    memory = build(run)
    assert memory is not None and not memory.prediction
    paths = render(run, tmp_path / "out")
    assert "Predicted vs measured" not in paths.md.read_text()


@pytest.mark.parametrize(("threshold", "action"), [(0.70, "allow"), (0.50, "warn")])
def test_the_suites_memory_threshold_sets_the_limit(
    tmp_path: Path, threshold: float, action: str
) -> None:
    """40 GiB of weights on a 64 GiB machine: within 70% of it, over 50% of it."""
    model = write_fake_model(tmp_path / "m", probe={"weights_bytes": 40 * GIB})
    session = _session(tmp_path)
    try:
        case = dataclasses.replace(_case(model), memory_threshold=threshold)
        result = session.run_case(case)
    finally:
        session.close_worker()
    assert result.preflight is not None and result.preflight.action == action, result.preflight
    if action == "warn":
        assert result.preflight.code == "insufficient_memory"


# -- backend capabilities: declared by the backend, required by the scenario -----------------

# (scenario, params, reason): the fake backend declares text generation only
LACKING: list[tuple[str, dict[str, Any], str]] = [
    ("prompt_cache", {"prompt_tokens": 16}, "capability_missing: backend fake has no prompt cache"),
    ("prompt_cache_lru", {}, "capability_missing: backend fake has no prompt cache"),
    ("tool_calls", {}, "capability_missing: backend fake has no tool parsing"),
    (
        "speculative",
        {"draft": {"embedded": "zoo/llama-draft"}},
        "capability_missing: backend fake has no draft-model decoding",
    ),
]


@pytest.mark.parametrize(("scenario", "params", "reason"), LACKING)
def test_a_backend_without_a_required_capability_is_skipped_before_load(
    tmp_path: Path, scenario: str, params: dict[str, Any], reason: str
) -> None:
    # its load would SIGKILL the worker: a skip proves none started
    model = write_fake_model(tmp_path / "m", on_load="sigkill")
    session = _session(tmp_path)
    try:
        result = session.run_case(_case(model, scenario, params=params))
        started = session._live is not None and session._live.client is not None
    finally:
        session.close_worker()
    assert (result.status, result.reason) == (Status.SKIPPED, reason)
    assert not started


def test_capabilities_are_judged_from_the_declaration_before_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.backends.fake import FakeBackend
    from harness.probe.types import ReasonCode

    model = write_fake_model(tmp_path / "m")
    calls: list[Path] = []
    monkeypatch.setattr(FakeBackend, "probe", lambda self, path: calls.append(path))
    preflight = Preflighter(budget=PLENTY).check(_case(model, "prompt_cache", params={}))
    assert preflight is not None and preflight.decision is not None and preflight.blocked
    assert preflight.decision.code is ReasonCode.CAPABILITY_MISSING
    assert preflight.needs == frozenset({Capability.TEXT})  # the model's needs, kept apart
    assert calls == []  # the model's files were not read for it


def test_a_backend_that_declares_nothing_is_left_to_its_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not judged (the worker's load then errors with the same one line and its fix)."""
    from harness.backends.fake import FakeBackend

    monkeypatch.delattr(FakeBackend, "capabilities")
    model = write_fake_model(tmp_path / "m")
    preflight = Preflighter(budget=PLENTY).check(_case(model, "prompt_cache", params={}))
    assert preflight is not None and preflight.decision is None
    assert preflight.reason.startswith("not judged: backend fake declares no capabilities: give")


def test_backend_needs_of_scenarios_and_plugins() -> None:
    from harness.scenarios import SCENARIOS

    assert scenario_backend_needs(SCENARIOS.get("tool_calls")) == {
        BackendCapability.TEXT_GENERATION,
        BackendCapability.TOOL_PARSING,
    }
    assert scenario_needs(SCENARIOS.get("tool_calls")) == {Capability.CHAT}


@pytest.mark.parametrize(("reference", "added"), [(None, 0), ("ref", 8192), ("missing", 0)])
def test_quality_reference_weights_are_in_the_estimate(
    tmp_path: Path, reference: str | None, added: int
) -> None:
    """``quality`` loads its reference beside the model: its weights count in the estimate
    (the larger of the two models' transient buffers once); an unresolvable reference adds
    nothing (the case fails with the reason when it runs)."""
    model = write_fake_model(tmp_path / "m", probe={"weights_bytes": 4096, "text": ARCH})
    write_fake_model(tmp_path / "ref", probe={"weights_bytes": 8192, "text": ARCH})
    params: dict[str, Any] = {"chunk_tokens": 16, "chunks": 1}
    if reference is not None:
        params["reference"] = {"path": str(tmp_path / reference)}
    preflight = Preflighter(budget=PLENTY).check(_case(model, "quality", params=params))
    assert preflight is not None and preflight.decision is not None
    estimate = preflight.decision.memory
    assert estimate is not None
    # every position's logits are kept (the text is scored); the fake is no mlx_lm backend
    alone = estimate_memory(_probe(model), 16, prompt_tokens=16, logits_rows=16)
    assert estimate.reference_weights_bytes == added
    assert estimate.mlx_peak_bytes == alone.mlx_peak_bytes + added
    record = preflight.record().memory
    assert record is not None and record.reference_weights_bytes == added
    assert ("reference_weights_bytes" in record.components) == bool(added)


def _probe(path: Path) -> Any:
    probe = Preflighter().probe(_case(path))
    assert not isinstance(probe, str)
    return probe
