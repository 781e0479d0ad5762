"""Compare on synthetic run records with known effects."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest

from harness.core.metrics import MetricSpec
from harness.core.types import (
    CaseResult,
    Machine,
    Metric,
    ModelIdentity,
    RunRecord,
    Shard,
    Status,
    Unit,
    Verdict,
)
from harness.results.compare import Thresholds, compare_runs

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


def test_same_distribution_is_unchanged_in_at_least_90_of_100_trials() -> None:
    verdicts: Counter[Verdict] = Counter()
    for seed in range(100):
        rng = random.Random(1000 + seed)
        base = _run("a", [_case(metrics=(_decode(_noisy(rng, 100, 0.02)),))])
        cur = _run("b", [_case(metrics=(_decode(_noisy(rng, 100, 0.02)),))])
        verdicts[compare_runs(base, cur).cases[0].verdict] += 1
    assert verdicts[Verdict.REGRESSED] + verdicts[Verdict.IMPROVED] <= 5  # false alarms
    assert verdicts[Verdict.UNCHANGED] >= 90  # the rest: inconclusive, never a verdict


def test_changed_chat_template_is_not_comparable() -> None:
    metrics = (_decode([100, 101, 99, 100, 102]),)
    base = _run("a", [_case(metrics=metrics)])
    cur = _run("b", [_case(metrics=(_decode([50, 51, 49, 50, 52]),))], template="t2")
    (case,) = compare_runs(base, cur).cases
    assert case.verdict is Verdict.NOT_COMPARABLE
    assert case.reasons == ("model files changed: chat template t1 -> t2",)


IDENTITY_CHANGES = [
    # (identity fields changed, the one reason line)
    (
        {"revision": "a" * 40, "weights_bytes": 538_000_000},
        "model files changed: revision aaaaaaaaaaaa -> bbbbbbbbbbbb, weights 513.1 MiB -> 98.2 MiB",
    ),
    ({"config_sha256": "c" * 64}, "model files changed: config.json cccccccccccc -> dddddddddddd"),
    ({"backend": "mlx_lm"}, "model files changed: backend mlx_lm -> mlx_vlm"),
    ({"server": None}, "model files changed: server none -> llama-server b1"),
]
IDENTITY_AFTER = {
    "revision": "b" * 40,
    "weights_bytes": 103_000_000,
    "config_sha256": "d" * 64,
    "backend": "mlx_vlm",
    "server": "llama-server b1",
}


@pytest.mark.parametrize(("before", "reason"), IDENTITY_CHANGES)
def test_a_changed_model_is_named_with_both_values_unless_allowed(
    before: dict[str, object], reason: str
) -> None:
    base = _run("a", [_case(metrics=(_decode([100, 101, 99, 100, 102]),))])
    cur = _run("b", [_case(metrics=(_decode([10, 11, 9, 10, 12]),))])
    old = dataclasses.replace(base.models["m"], **before)  # type: ignore[arg-type]
    new = dataclasses.replace(base.models["m"], **{k: IDENTITY_AFTER[k] for k in before})  # type: ignore[arg-type]
    base = dataclasses.replace(base, models={"m": old})
    cur = dataclasses.replace(cur, models={"m": new})
    (case,) = compare_runs(base, cur).cases
    assert case.verdict is Verdict.NOT_COMPARABLE and case.reasons == (reason,)
    allowed = compare_runs(base, cur, thresholds=Thresholds(allow_model_change=True)).cases[0]
    assert allowed.verdict is Verdict.REGRESSED  # compared on purpose: the drop still shows


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


# A -53% decode drop, as in issue 11: 3 samples a side can never be significant (p >= 0.1).
DROP_BASE = [20.1, 20.3, 19.9, 20.2, 20.0]
DROP_CUR = [9.4, 9.5, 9.3, 9.6, 9.45]


@pytest.mark.parametrize(
    ("n", "verdict", "label"),
    [
        (1, Verdict.INCONCLUSIVE, "inconclusive (needs n >= 4 a side)"),
        (2, Verdict.INCONCLUSIVE, "inconclusive (needs n >= 4 a side)"),
        (3, Verdict.INCONCLUSIVE, "inconclusive (needs n >= 4 a side)"),
        (4, Verdict.REGRESSED, "regressed (p=0.0286, minimum effect 3%)"),
        (5, Verdict.REGRESSED, "regressed (p=0.00794, minimum effect 3%)"),
    ],
)
def test_a_large_decode_drop_is_inconclusive_until_the_samples_can_decide(
    n: int, verdict: Verdict, label: str
) -> None:
    base = _run("a", [_case(metrics=(_decode(DROP_BASE[:n]),))])
    cur = _run("b", [_case(metrics=(_decode(DROP_CUR[:n]),))])
    comparison = compare_runs(base, cur)
    (case,) = comparison.cases
    (delta,) = case.metrics
    assert (case.verdict, delta.verdict, delta.label) == (verdict, verdict, label)
    assert -0.54 < delta.change < -0.52
    if verdict is Verdict.INCONCLUSIVE:
        assert delta.needed_n == 4 and delta.p_value is None
        assert comparison.inconclusive == comparison.cases and not comparison.regressions
    else:
        assert comparison.regressions == comparison.cases and not comparison.inconclusive


def test_ties_never_make_three_samples_significant() -> None:
    # the normal approximation gives p=0.047 for [5,5,5] vs [6,6,6]; 3 a side still cannot decide
    base = _run("a", [_case(metrics=(_decode([5.0, 5.0, 5.0]),))])
    cur = _run("b", [_case(metrics=(_decode([6.0, 6.0, 6.0]),))])
    assert compare_runs(base, cur).cases[0].metrics[0].label == "inconclusive (needs n >= 4 a side)"


def test_uneven_samples_are_judged_by_what_they_can_reach() -> None:
    # 3 vs 5: the smallest p is 2/56 = 0.036, so the test can decide
    base = _run("a", [_case(metrics=(_decode(DROP_BASE[:3]),))])
    cur = _run("b", [_case(metrics=(_decode(DROP_CUR),))])
    assert compare_runs(base, cur).cases[0].verdict is Verdict.REGRESSED


def test_a_change_over_the_minimum_effect_that_is_not_significant_is_inconclusive() -> None:
    base = _run("a", [_case(metrics=(_decode([100, 80, 120, 90, 110]),))])
    cur = _run("b", [_case(metrics=(_decode([95, 75, 118, 85, 104]),))])
    (delta,) = compare_runs(base, cur).cases[0].metrics
    assert delta.verdict is Verdict.INCONCLUSIVE and delta.change == pytest.approx(-0.05)
    assert delta.p_value is not None and delta.p_value >= 0.05
    assert delta.note == f"p={delta.p_value:.3g}, not significant at alpha 0.05"


def test_a_small_change_with_enough_samples_is_unchanged() -> None:
    base = _run("a", [_case(metrics=(_decode([100, 101, 99, 100, 102]),))])
    cur = _run("b", [_case(metrics=(_decode([100.5, 101, 99.5, 100, 101]),))])
    (delta,) = compare_runs(base, cur).cases[0].metrics
    assert delta.verdict is Verdict.UNCHANGED and delta.note.endswith("under the 3% minimum effect")


def _mem(*values: float) -> Metric:
    return Metric("memory.mlx_peak_bytes", Unit.BYTES, values)


@pytest.mark.parametrize(
    ("before", "after", "verdict", "note"),
    [
        # counted quantities (bytes, counts, tokens) recorded once per case: no test is possible
        ((100.0,), (100.0,), Verdict.UNCHANGED, "identical samples"),
        ((100.0,), (102.0,), Verdict.UNCHANGED, "under the 3% minimum effect"),
        ((100.0,), (105.0,), Verdict.INCONCLUSIVE, "recorded once a case, judged by its size"),
        ((100.0,), (130.0,), Verdict.REGRESSED, "moved 10% or more"),
        ((100.0,), (80.0,), Verdict.IMPROVED, "moved 10% or more"),  # lower is better
        ((0.0,), (0.0,), Verdict.UNCHANGED, "identical samples"),
        ((0.0,), (4096.0,), Verdict.REGRESSED, "moved 10% or more"),  # from nothing
        ((100.0, 100.0), (105.0, 105.0), Verdict.INCONCLUSIVE, "needs n >= 4 a side"),
    ],
)
def test_counted_quantities_with_too_few_samples(
    before: tuple[float, ...], after: tuple[float, ...], verdict: Verdict, note: str
) -> None:
    base = _run("a", [_case(metrics=(_mem(*before),))])
    cur = _run("b", [_case(metrics=(_mem(*after),))])
    (delta,) = compare_runs(base, cur).cases[0].metrics
    assert delta.verdict is verdict and note in delta.note


@pytest.mark.parametrize(
    ("unit", "verdict"),
    [
        (Unit.SECONDS, Verdict.INCONCLUSIVE),
        (Unit.TOKENS_PER_SECOND, Verdict.INCONCLUSIVE),
        (Unit.RATIO, Verdict.INCONCLUSIVE),  # speedups are ratios of timings
        (Unit.BYTES, Verdict.IMPROVED),
        (Unit.COUNT, Verdict.IMPROVED),
        (Unit.TOKENS, Verdict.IMPROVED),
    ],
)
def test_one_timing_sample_is_never_judged_one_count_can_be(unit: Unit, verdict: Verdict) -> None:
    metric = lambda v: Metric("x.y", unit, (v,))  # noqa: E731
    base = _run("a", [_case(metrics=(metric(100.0),))])
    cur = _run("b", [_case(metrics=(metric(150.0),))])
    assert compare_runs(base, cur).cases[0].verdict is verdict


@pytest.mark.parametrize(
    ("verdicts", "case_verdict"),
    [
        ((Verdict.UNCHANGED, Verdict.INCONCLUSIVE), Verdict.INCONCLUSIVE),
        ((Verdict.INCONCLUSIVE, Verdict.IMPROVED), Verdict.IMPROVED),
        ((Verdict.IMPROVED, Verdict.REGRESSED, Verdict.INCONCLUSIVE), Verdict.REGRESSED),
        ((Verdict.UNCHANGED, Verdict.UNCHANGED), Verdict.UNCHANGED),
    ],
)
def test_case_verdict_rolls_up(verdicts: tuple[Verdict, ...], case_verdict: Verdict) -> None:
    samples = {  # count metrics (lower is better) with one sample a side
        Verdict.UNCHANGED: (100.0, 100.0),
        Verdict.INCONCLUSIVE: (100.0, 105.0),
        Verdict.IMPROVED: (100.0, 50.0),
        Verdict.REGRESSED: (100.0, 200.0),
    }
    before = tuple(Metric(f"m.{i}", Unit.COUNT, (samples[v][0],)) for i, v in enumerate(verdicts))
    after = tuple(Metric(f"m.{i}", Unit.COUNT, (samples[v][1],)) for i, v in enumerate(verdicts))
    specs = {m.name: MetricSpec(m.name, Unit.COUNT, False, "") for m in before}
    comparison = compare_runs(
        _run("a", [_case(metrics=before)]), _run("b", [_case(metrics=after)]), specs=specs
    )
    (case,) = comparison.cases
    assert tuple(d.verdict for d in case.metrics) == verdicts
    assert case.verdict is case_verdict
    assert comparison.metric_counts() == Counter(verdicts)


def test_allow_model_change_compares_variants_on_purpose() -> None:
    base = _run("a", [_case(metrics=(_decode([100, 101, 99, 100, 102]),))])
    cur = _run("b", [_case(metrics=(_decode([50, 51, 49, 50, 52]),))], template="t2")
    allowed = compare_runs(base, cur, thresholds=Thresholds(allow_model_change=True))
    assert allowed.cases[0].verdict is Verdict.REGRESSED


STATUS_PAIRS = [
    # (baseline, current, verdict, reason fragment)
    (Status.PASSED, Status.INTERRUPTED, Verdict.NOT_COMPARABLE, "not finished in the current"),
    (Status.INTERRUPTED, Status.PASSED, Verdict.NOT_COMPARABLE, "not finished in the baseline"),
    (Status.PASSED, Status.SKIPPED, Verdict.NOT_COMPARABLE, "status passed -> skipped"),
    (Status.SKIPPED, Status.XFAILED, Verdict.NOT_COMPARABLE, "status skipped -> xfailed"),
    (Status.SKIPPED, Status.SKIPPED, Verdict.UNCHANGED, ""),
    (Status.PASSED, Status.ERRORED, Verdict.NEWLY_FAILING, ""),
    (Status.CRASHED, Status.PASSED, Verdict.FIXED, ""),
    # a ledger entry for the new versions: it stopped working, as a known break
    (Status.PASSED, Status.XFAILED, Verdict.NEWLY_FAILING, "known broken (xfail): "),
    (Status.XPASSED, Status.XFAILED, Verdict.NEWLY_FAILING, "known broken (xfail): "),
    (Status.XFAILED, Status.PASSED, Verdict.FIXED, ""),
    (Status.XFAILED, Status.XFAILED, Verdict.UNCHANGED, ""),
]


@pytest.mark.parametrize(("before", "after", "verdict", "reason"), STATUS_PAIRS)
def test_status_changes_are_never_silently_unchanged(
    before: Status, after: Status, verdict: Verdict, reason: str
) -> None:
    (case,) = compare_runs(_run("a", [_case(before)]), _run("b", [_case(after)])).cases
    assert case.verdict is verdict
    assert reason in " ".join(case.reasons)


def test_a_changed_model_is_named_where_its_case_newly_fails_and_on_the_comparison() -> None:
    """A hub revision moved to 4-bit files and the case's gate failed: the newly failing case
    names the change first, and the comparison lists it even when allowed."""
    base = _run("a", [_case(metrics=(_decode([100, 101, 99, 100, 102]),))])
    cur = _run("b", [_case(Status.FAILED, metrics=(_decode([10, 11, 9, 10, 12]),), reason="gate")])
    old = dataclasses.replace(base.models["m"], revision="a" * 40)
    new = dataclasses.replace(base.models["m"], revision="b" * 40)
    base = dataclasses.replace(base, models={"m": old})
    cur = dataclasses.replace(cur, models={"m": new})
    change = "model files changed: revision aaaaaaaaaaaa -> bbbbbbbbbbbb"
    for allowed in (False, True):
        comparison = compare_runs(base, cur, thresholds=Thresholds(allow_model_change=allowed))
        (case,) = comparison.cases
        assert case.verdict is Verdict.NEWLY_FAILING
        assert case.reasons == (change, "gate")
        assert comparison.model_changes == (f"m: {change}",)


@pytest.mark.parametrize(
    ("selection", "shard", "verdict", "reason"),
    [
        ((), None, Verdict.REMOVED, None),
        (("-k load",), None, Verdict.NOT_SELECTED, "not selected in this run (-k load)"),
        ((), Shard(2, 3, 4), Verdict.NOT_SELECTED, "not selected in this run (shard 2/3)"),
    ],
)
def test_a_case_left_out_by_a_selection_is_not_selected_not_removed(
    selection: tuple[str, ...], shard: Shard | None, verdict: Verdict, reason: str | None
) -> None:
    base = _run("a", [_case(), _case(case_id="smoke::m::load")])
    cur = dataclasses.replace(_run("b", [_case()]), selection=selection, shard=shard)
    gone = next(c for c in compare_runs(base, cur).cases if c.case_id == "smoke::m::load")
    assert gone.verdict is verdict
    assert gone.reasons == ((reason,) if reason else ())
