"""The pin-set matrix on synthetic runs with known changes between adjacent pin sets."""

from __future__ import annotations

import dataclasses

import pytest

from harness.core.types import (
    CaseResult,
    Machine,
    Metric,
    ModelIdentity,
    PinSetInfo,
    RunRecord,
    Status,
    Unit,
    Verdict,
)
from harness.results.pin_matrix import PinMatrixError, build_pin_matrix

MACHINE = Machine("Linux", "6", "x86_64", "cpu", 2, 1 << 34, "3.11", blas="openblas")
OTHER = Machine("Darwin", "24", "arm64", "Apple M2", 12, 1 << 36, "3.12", mlx_device="gpu")
FAST = (100.0, 101.0, 99.0, 100.5, 99.5)
SLOW = (80.0, 81.0, 79.0, 80.5, 79.5)


def _case(model: str, status: Status, decode: tuple[float, ...] = FAST) -> CaseResult:
    metrics = (Metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, decode),) if decode else ()
    return CaseResult(
        f"s::{model}::throughput", "s", model, "throughput", status, metrics=metrics,
        reason=None if status is Status.PASSED else "load failed: boom",
    )  # fmt: skip


def _run(name: str, cases: list[CaseResult], mlx_lm: str, machine: Machine = MACHINE) -> RunRecord:
    identity = ModelIdentity("m", "/m", "mlx_lm", config_sha256="c", weights_bytes=10)
    return RunRecord(
        1,
        f"nightly-{name}",
        "2026-11-23T01:00:00+00:00",
        machine,
        {"mlx": "0.32.4", "mlx-lm": mlx_lm},
        "sha",
        models={c.model: identity for c in cases},
        results=tuple(cases),
        finished_at="2026-11-23T01:00:42+00:00",
        pin_set=PinSetInfo(
            name,
            (f"mlx-lm=={mlx_lm}",),
            {"mlx-lm": mlx_lm},
            environment_s=3.5,
            environment_cold=False,
        ),
    )


# (model, statuses and decode samples per pin set, the two steps expected)
ROWS = [
    ("steady", [(Status.PASSED, FAST)] * 3, [Verdict.UNCHANGED, Verdict.UNCHANGED]),
    ("slows", [(Status.PASSED, FAST), (Status.PASSED, SLOW), (Status.PASSED, SLOW)],
     [Verdict.REGRESSED, Verdict.UNCHANGED]),
    ("breaks", [(Status.PASSED, FAST), (Status.PASSED, FAST), (Status.ERRORED, ())],
     [Verdict.UNCHANGED, Verdict.NEWLY_FAILING]),
    ("mends", [(Status.ERRORED, ()), (Status.PASSED, FAST), (Status.PASSED, FAST)],
     [Verdict.FIXED, Verdict.UNCHANGED]),
    ("few", [(Status.PASSED, FAST[:2]), (Status.PASSED, SLOW[:2]), (Status.PASSED, SLOW[:2])],
     [Verdict.INCONCLUSIVE, Verdict.UNCHANGED]),
]  # fmt: skip
VERSIONS = ("0.31.3", "0.32.0", "0.32.2")


def _runs() -> list[RunRecord]:
    return [
        _run(f"lm-{v}", [_case(m, *per_set[i]) for m, per_set, _ in ROWS], v)
        for i, v in enumerate(VERSIONS)
    ]


def test_each_step_is_judged_by_the_compare_rules() -> None:
    matrix = build_pin_matrix(_runs())
    got = {row.model: [s.verdict if s else None for s in row.steps] for row in matrix.rows}
    assert got == {model: steps for model, _, steps in ROWS}
    slows = next(r for r in matrix.rows if r.model == "slows")
    assert slows.steps[0] is not None and "decode_tps -20.0%" in slows.steps[0].note


def test_columns_state_their_denominator_and_times() -> None:
    columns = build_pin_matrix(_runs()).columns
    assert [c.label for c in columns] == ["lm-0.31.3", "lm-0.32.0", "lm-0.32.2"]
    assert [(c.models, c.cases, c.passed) for c in columns] == [(5, 5, 4), (5, 5, 5), (5, 5, 4)]
    assert columns[0].stack == (("mlx", "0.32.4"), ("mlx-lm", "0.31.3"))
    assert (columns[0].environment_s, columns[0].run_s) == (3.5, 42.0)


def test_transitions_count_verdicts_and_name_the_package_change() -> None:
    first, second = build_pin_matrix(_runs()).transitions
    assert first.package_changes == ("mlx-lm: 0.31.3 -> 0.32.0",)
    assert first.compared == 5
    assert first.verdicts == {
        Verdict.UNCHANGED: 2, Verdict.REGRESSED: 1, Verdict.FIXED: 1, Verdict.INCONCLUSIVE: 1
    }  # fmt: skip
    assert second.verdicts[Verdict.NEWLY_FAILING] == 1


def _took_turns(runs: list[RunRecord], names: tuple[str, ...]) -> list[RunRecord]:
    """``runs`` as if the pin sets ``names`` had taken turns in one run."""
    return [
        dataclasses.replace(run, pin_set=dataclasses.replace(run.pin_set, interleaved_with=names))
        if run.pin_set is not None and run.pin_set.name in names
        else run
        for run in runs
    ]


# (pin sets that took turns, side_by_side of the two transitions)
TURNS = [
    ((), [False, False]),
    (("lm-0.31.3", "lm-0.32.0", "lm-0.32.2"), [True, True]),
    (("lm-0.32.0", "lm-0.32.2"), [False, True]),
    (("lm-0.31.3",), [False, False]),  # names only itself: nobody to take turns with
]


@pytest.mark.parametrize(("names", "expected"), TURNS)
def test_a_transition_says_whether_its_runs_took_turns(
    names: tuple[str, ...], expected: list[bool]
) -> None:
    matrix = build_pin_matrix(_took_turns(_runs(), names))
    assert [t.side_by_side for t in matrix.transitions] == expected


def test_cells_keep_status_and_key_metric_medians() -> None:
    row = next(r for r in build_pin_matrix(_runs()).rows if r.model == "slows")
    before, after = row.cells[0], row.cells[1]
    assert before is not None and after is not None
    assert [(m.name, m.median, m.n) for m in after.metrics] == [("throughput.decode_tps", 80.0, 5)]


def test_a_case_missing_from_one_run_has_no_step() -> None:
    runs = _runs()
    runs[1] = _run("lm-0.32.0", [_case("steady", Status.PASSED)], "0.32.0")
    row = next(r for r in build_pin_matrix(runs).rows if r.model == "slows")
    assert row.cells[1] is None and row.steps == (None, None)


def test_timings_from_another_machine_are_not_compared_silently() -> None:
    runs = _runs()
    runs[2] = _run("lm-0.32.2", [_case("steady", Status.PASSED)], "0.32.2", machine=OTHER)
    matrix = build_pin_matrix(runs)
    step = matrix.rows[0].steps[1]
    assert step is not None and step.verdict is Verdict.NOT_COMPARABLE
    assert "machine changed" in step.note
    assert matrix.transitions[1].machine_changes


@pytest.mark.parametrize(
    ("runs", "fragment"),
    [
        (lambda r: r[:1], "needs at least two runs, got 1"),
        (lambda r: [r[0], r[0]], "pin set 'lm-0.31.3' is named by more than one run"),
    ],
)
def test_runs_that_cannot_form_a_matrix_are_one_line(runs: object, fragment: str) -> None:
    with pytest.raises(PinMatrixError, match=fragment) as caught:
        build_pin_matrix(runs(_runs()))  # type: ignore[operator]
    assert "\n" not in str(caught.value)
