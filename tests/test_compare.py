"""Compare on synthetic run records with known effects."""

from __future__ import annotations

import dataclasses
import random

import pytest

from harness.compare import Thresholds, compare_runs
from harness.types import (
    CaseResult,
    Machine,
    Metric,
    ModelIdentity,
    RunRecord,
    Status,
    Unit,
    Verdict,
)

MACHINE = Machine("Linux", "6", "x86_64", "cpu", 2, 1 << 34, "3.11", blas="openblas")
CASE = "smoke::m::throughput[prompt_tokens=128]"


def _decode(samples: list[float]) -> Metric:
    return Metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, tuple(samples))


def _run(run_id: str, results: list[CaseResult], template: str = "t1", **kw: object) -> RunRecord:
    identity = ModelIdentity(
        "m", "/m", "mlx_lm", config_sha256="c", chat_template_sha256=template, weights_bytes=10
    )
    return RunRecord(
        1,
        run_id,
        "2026-01-01",
        kw.pop("machine", MACHINE),  # type: ignore[arg-type]
        {"mlx": str(kw.pop("mlx", "0.32.4"))},
        "sha",
        models={"m": identity},
        results=tuple(results),
    )


def _case(
    status: Status = Status.PASSED,
    metrics: tuple[Metric, ...] = (),
    case_id: str = CASE,
    **kw: object,
) -> CaseResult:
    return CaseResult(
        case_id,
        "smoke",
        "m",
        "throughput",
        status,
        params={"prompt_tokens": 128},
        metrics=metrics,
        **kw,
    )  # type: ignore[arg-type]


def _noisy(rng: random.Random, mean: float, rel_sd: float, n: int = 5) -> list[float]:
    return [rng.gauss(mean, mean * rel_sd) for _ in range(n)]


@pytest.mark.parametrize("seed", range(10))
def test_ten_percent_decode_slowdown_is_regressed(seed: int) -> None:
    rng = random.Random(seed)
    base = _run("a", [_case(metrics=(_decode(_noisy(rng, 100, 0.02)),))])
    cur = _run("b", [_case(metrics=(_decode(_noisy(rng, 90, 0.02)),))])
    (case,) = compare_runs(base, cur).cases
    assert case.verdict is Verdict.REGRESSED
    (delta,) = case.metrics
    assert delta.verdict is Verdict.REGRESSED and -0.15 < delta.change < -0.05
    assert delta.p_value is not None and delta.p_value < 0.05


def test_speedup_is_improved() -> None:
    rng = random.Random(1)
    base = _run("a", [_case(metrics=(_decode(_noisy(rng, 100, 0.02)),))])
    cur = _run("b", [_case(metrics=(_decode(_noisy(rng, 120, 0.02)),))])
    assert compare_runs(base, cur).cases[0].verdict is Verdict.IMPROVED


def test_lower_is_better_metrics_use_their_direction() -> None:
    ttft = lambda v: Metric("throughput.ttft_s", Unit.SECONDS, tuple(v))  # noqa: E731
    base = _run("a", [_case(metrics=(ttft([1.0, 1.01, 0.99, 1.0, 1.02]),))])
    cur = _run("b", [_case(metrics=(ttft([1.2, 1.21, 1.19, 1.2, 1.22]),))])
    assert compare_runs(base, cur).cases[0].verdict is Verdict.REGRESSED


def test_same_distribution_is_unchanged_in_at_least_95_of_100_trials() -> None:
    unchanged = 0
    for seed in range(100):
        rng = random.Random(1000 + seed)
        base = _run("a", [_case(metrics=(_decode(_noisy(rng, 100, 0.02)),))])
        cur = _run("b", [_case(metrics=(_decode(_noisy(rng, 100, 0.02)),))])
        unchanged += compare_runs(base, cur).cases[0].verdict is Verdict.UNCHANGED
    assert unchanged >= 95


def test_changed_chat_template_is_not_comparable() -> None:
    metrics = (_decode([100, 101, 99, 100, 102]),)
    base = _run("a", [_case(metrics=metrics)])
    cur = _run("b", [_case(metrics=(_decode([50, 51, 49, 50, 52]),))], template="t2")
    (case,) = compare_runs(base, cur).cases
    assert case.verdict is Verdict.NOT_COMPARABLE and "chat template changed" in case.reasons


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"scenario_version": 2}, "scenario version 1 -> 2"),
        ({"params": {"prompt_tokens": 256}}, "params changed: prompt_tokens 128 -> 256"),
    ],
)
def test_other_not_comparable_reasons(change: dict[str, object], reason: str) -> None:
    metrics = (_decode([100, 101, 99]),)
    base = _run("a", [_case(metrics=metrics)])
    cur = _run("b", [dataclasses.replace(_case(metrics=metrics), **change)])  # type: ignore[arg-type]
    (case,) = compare_runs(base, cur).cases
    assert case.verdict is Verdict.NOT_COMPARABLE and reason in case.reasons


@pytest.mark.parametrize(
    ("before", "after", "comparable"),
    [
        ({"chat_template_sha256": "a" * 64}, {"chat_template_sha256": "a" * 64}, True),
        ({"chat_template_sha256": "a" * 64}, {"chat_template_sha256": "b" * 64}, False),
        ({"chat_template_sha256": "a" * 64}, {}, True),  # an older run without the fingerprint
        ({"parser": "json_tools"}, {"parser": "pythonic"}, True),  # outputs, not inputs
    ],
)
def test_an_input_fingerprinted_in_artifacts_that_changed_is_not_comparable(
    before: dict[str, object], after: dict[str, object], comparable: bool
) -> None:
    metrics = (_decode([100, 101, 99, 100, 102]),)
    base = _run("a", [dataclasses.replace(_case(metrics=metrics), artifacts=before)])
    cur = _run("b", [dataclasses.replace(_case(metrics=metrics), artifacts=after)])
    (case,) = compare_runs(base, cur).cases
    assert (case.verdict is not Verdict.NOT_COMPARABLE) is comparable, case.reasons
    if not comparable:
        assert case.reasons == ("chat template changed: aaaaaaaaaaaa -> bbbbbbbbbbbb",)


def test_machine_change_is_not_comparable_unless_allowed() -> None:
    metrics = (_decode([100, 101, 99]),)
    other = dataclasses.replace(MACHINE, blas="bundled")
    base, cur = (
        _run("a", [_case(metrics=metrics)]),
        _run("b", [_case(metrics=metrics)], machine=other),
    )
    comparison = compare_runs(base, cur)
    assert comparison.machine_changes == ("blas: openblas -> bundled",)
    assert comparison.cases[0].verdict is Verdict.NOT_COMPARABLE
    allowed = compare_runs(base, cur, thresholds=Thresholds(allow_machine_change=True))
    assert allowed.cases[0].verdict is Verdict.UNCHANGED


@pytest.mark.parametrize(
    ("before", "after", "verdict"),
    [
        (Status.PASSED, Status.CRASHED, Verdict.NEWLY_FAILING),
        (Status.PASSED, Status.TIMED_OUT, Verdict.NEWLY_FAILING),
        (Status.CRASHED, Status.PASSED, Verdict.FIXED),
        (Status.FAILED, Status.FAILED, Verdict.UNCHANGED),
        (Status.SKIPPED, Status.SKIPPED, Verdict.UNCHANGED),
        (None, Status.PASSED, Verdict.NEW),
        (Status.PASSED, None, Verdict.REMOVED),
    ],
)
def test_status_transitions(before: Status | None, after: Status | None, verdict: Verdict) -> None:
    base = _run("a", [_case(before)] if before else [])
    cur = _run("b", [_case(after, reason="worker killed by SIGKILL")] if after else [])
    comparison = compare_runs(base, cur)
    assert [c.verdict for c in comparison.cases] == [verdict]
    if verdict is Verdict.NEWLY_FAILING:
        assert comparison.regressions == comparison.cases


def test_package_changes_are_listed_not_blocking() -> None:
    metrics = (_decode([100, 101, 99]),)
    comparison = compare_runs(
        _run("a", [_case(metrics=metrics)]), _run("b", [_case(metrics=metrics)], mlx="0.33.0")
    )
    assert comparison.package_changes == ("mlx: 0.32.4 -> 0.33.0",)
    assert comparison.cases[0].verdict is Verdict.UNCHANGED


def test_single_samples_need_a_large_change() -> None:
    mem = lambda v: Metric("memory.mlx_peak_bytes", Unit.BYTES, (v,))  # noqa: E731
    small = compare_runs(
        _run("a", [_case(metrics=(mem(100.0),))]), _run("b", [_case(metrics=(mem(105.0),))])
    )
    large = compare_runs(
        _run("a", [_case(metrics=(mem(100.0),))]), _run("b", [_case(metrics=(mem(130.0),))])
    )
    assert small.cases[0].verdict is Verdict.UNCHANGED
    assert large.cases[0].verdict is Verdict.REGRESSED


def test_allow_model_change_compares_variants_on_purpose() -> None:
    base = _run("a", [_case(metrics=(_decode([100, 101, 99, 100, 102]),))])
    cur = _run("b", [_case(metrics=(_decode([50, 51, 49, 50, 52]),))], template="t2")
    allowed = compare_runs(base, cur, thresholds=Thresholds(allow_model_change=True))
    assert allowed.cases[0].verdict is Verdict.REGRESSED
