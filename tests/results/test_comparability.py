"""One comparability rule (issue 37, item 7): what makes a baseline's case not comparable with
the current one, the same for compare's verdicts and for relative gates."""

from __future__ import annotations

import dataclasses

import pytest

from harness.core.types import (
    CaseResult,
    Machine,
    Metric,
    ModelIdentity,
    RunRecord,
    Status,
    Unit,
    Verdict,
)
from harness.results.comparability import (
    identity_changes,
    machine_apart,
    model_changes,
    not_comparable,
)
from harness.results.compare import Thresholds, compare_runs

MACHINE = Machine("Linux", "6", "x86_64", "cpu", 2, 1 << 34, "3.11", blas="openblas")
F32 = ModelIdentity("m", "/m", "mlx_lm", config_sha256="c", weights_bytes=538_000_000)
Q4 = dataclasses.replace(F32, weights_bytes=103_000_000)
DECODE = "throughput.decode_tps"


def _result(prompt_tokens: int = 64, **kw: object) -> CaseResult:
    fields: dict[str, object] = {"params": {"prompt_tokens": prompt_tokens}, **kw}
    return CaseResult("s::m::throughput", "s", "m", "throughput", Status.PASSED, **fields)  # type: ignore[arg-type]


PARAMS = "params changed: prompt_tokens 64 -> 1024"
WEIGHTS = "model files changed: weights 513.1 MiB -> 98.2 MiB"

# (baseline, current, identities, allow_model_change, reasons)
TABLE = [
    (_result(), _result(), (F32, F32), False, []),
    (_result(), _result(1024), (F32, F32), False, [PARAMS]),
    (_result(), _result(), (F32, Q4), False, [WEIGHTS]),
    (_result(), _result(), (F32, Q4), True, []),  # variants compared on purpose
    (_result(), _result(1024), (F32, Q4), True, [PARAMS]),  # the allowance is for models only
    (_result(), _result(), (None, Q4), False, []),  # a run without the identity: not held
    (_result(), _result(), (F32, None), False, []),
    (
        _result(scenario_version=1),
        _result(scenario_version=2),
        (F32, F32),
        False,
        ["scenario version 1 -> 2"],
    ),
    (
        _result(artifacts={"template_sha256": "a" * 64}),
        _result(artifacts={"template_sha256": "b" * 64}),
        (F32, F32),
        False,
        ["template changed: aaaaaaaaaaaa -> bbbbbbbbbbbb"],
    ),
    (_result(), _result(1024), (F32, Q4), False, [PARAMS, WEIGHTS]),
]


@pytest.mark.parametrize(("base", "cur", "identities", "allow", "reasons"), TABLE)
def test_what_makes_a_case_not_comparable(
    base: CaseResult,
    cur: CaseResult,
    identities: tuple[ModelIdentity | None, ModelIdentity | None],
    allow: bool,
    reasons: list[str],
) -> None:
    assert not_comparable(base, cur, identities, allow_model_change=allow) == reasons


def test_identity_changes_name_every_field_with_both_values() -> None:
    other = dataclasses.replace(Q4, revision="9f8e7d6c5b4a3210", chat_template_sha256="t2")
    assert identity_changes(F32, other) == [
        "model files changed: revision none -> 9f8e7d6c5b4a, weights 513.1 MiB -> 98.2 MiB, "
        "chat template none -> t2"
    ]
    assert identity_changes(F32, F32) == [] and identity_changes(None, F32) == []


def _run(run_id: str, identity: ModelIdentity, result: CaseResult) -> RunRecord:
    return RunRecord(
        1, run_id, "2026-01-01", MACHINE, {}, "sha", models={"m": identity}, results=(result,)
    )


@pytest.mark.parametrize(
    ("cur", "identity", "allow", "verdict", "reason"),
    [
        (_result(1024), F32, False, Verdict.NOT_COMPARABLE, PARAMS),
        (_result(), Q4, False, Verdict.NOT_COMPARABLE, WEIGHTS),
        (_result(), Q4, True, Verdict.REGRESSED, None),
    ],
)
def test_compare_follows_the_same_rule(
    cur: CaseResult, identity: ModelIdentity, allow: bool, verdict: Verdict, reason: str | None
) -> None:
    fast = (Metric(DECODE, Unit.TOKENS_PER_SECOND, (100.0, 101.0, 99.0, 100.5, 99.5)),)
    slow = (Metric(DECODE, Unit.TOKENS_PER_SECOND, (72.0, 72.5, 71.5, 72.2, 71.8)),)
    base = _run("a", F32, _result(metrics=fast))
    now = _run("b", identity, dataclasses.replace(cur, metrics=slow))
    (case,) = compare_runs(base, now, thresholds=Thresholds(allow_model_change=allow)).cases
    assert case.verdict is verdict
    if reason is not None:
        assert case.reasons == (reason,)


def test_the_model_is_held_against_its_files_by_default() -> None:
    assert not_comparable(_result(), _result(), (F32, Q4)) == [WEIGHTS]


@pytest.mark.parametrize(
    ("before", "after", "reason"),
    [
        # a param on one side only changed too
        ({"prompt_tokens": 64}, {"prompt_tokens": 64, "max_tokens": 8}, "max_tokens None -> 8"),
        ({"prompt_tokens": 64, "max_tokens": 8}, {"prompt_tokens": 64}, "max_tokens 8 -> None"),
        # every param named, in order
        (
            {"prompt_tokens": 64, "gen_tokens": 4},
            {"prompt_tokens": 1024, "gen_tokens": 8},
            "gen_tokens 4 -> 8, prompt_tokens 64 -> 1024",
        ),
        ({"chat": "yes"}, {"chat": "no"}, "chat 'yes' -> 'no'"),
    ],
)
def test_params_changed_names_each_param_with_both_values(
    before: dict[str, object], after: dict[str, object], reason: str
) -> None:
    base = dataclasses.replace(_result(), params=before)
    cur = dataclasses.replace(_result(), params=after)
    assert not_comparable(base, cur, (F32, F32)) == [f"params changed: {reason}"]


def test_an_input_on_one_side_only_is_no_change() -> None:
    base = _result(artifacts={"tool_calls_template_sha256": "a" * 64})
    cur = _result(artifacts={})
    assert not_comparable(base, cur, (F32, F32)) == []
    cur = _result(artifacts={"tool_calls_template_sha256": "b" * 64})
    assert not_comparable(base, cur, (F32, F32)) == [
        "tool calls template changed: aaaaaaaaaaaa -> bbbbbbbbbbbb"
    ]


def test_model_changes_reads_each_run_under_its_own_name() -> None:
    base, cur = _run("a", F32, _result()), _run("b", Q4, _result())
    cur = dataclasses.replace(cur, models={"q": Q4})
    assert model_changes(base, cur, "m", "q") == [WEIGHTS]
    assert model_changes(base, cur, "m", "m") == []  # no identity under that name: not held
    assert model_changes(base, cur, "q", "q") == []


# (field, before, after, line)
IDENTITY_LINES = [
    ("revision", None, "9f8e7d6c5b4a3210", "revision none -> 9f8e7d6c5b4a"),
    ("revision", "", "1a2b3c4d5e6f7890", "revision none -> 1a2b3c4d5e6f"),
    ("config_sha256", "c" * 64, "d" * 64, "config.json cccccccccccc -> dddddddddddd"),
    ("weights_bytes", 2**20, 3 * 2**19, "weights 1.0 MiB -> 1.5 MiB"),
    ("weights_bytes", None, 2**20, "weights none -> 1.0 MiB"),
    ("backend", "mlx_lm_kv_quantized", "mlx_vlm_something", None),
    ("server", "mlx_lm.server 0.31.1-rc", "", "server mlx_lm.server 0.31.1-rc -> none"),
]


@pytest.mark.parametrize(("name", "before", "after", "line"), IDENTITY_LINES)
def test_each_identity_field_reads_as_people_say_it(
    name: str, before: object, after: object, line: str | None
) -> None:
    got = identity_changes(
        dataclasses.replace(F32, **{name: before}), dataclasses.replace(F32, **{name: after})
    )
    expected = line or f"backend {before} -> {after}"  # a backend is shown whole
    assert got == [f"model files changed: {expected}"]


M2 = dataclasses.replace(MACHINE, cpu="Apple M2")

# (baseline's machine, current's, allow_machine_change, the run-wide reasons)
MACHINES = [
    (MACHINE, MACHINE, False, ()),
    (MACHINE, M2, False, ("machine changed (cpu: cpu -> Apple M2)",)),
    (MACHINE, M2, True, ()),
    (
        MACHINE,
        dataclasses.replace(M2, blas="bundled"),
        False,
        ("machine changed (cpu: cpu -> Apple M2; blas: openblas -> bundled)",),
    ),
    (MACHINE, dataclasses.replace(MACHINE, hostname="other", python="3.12"), False, ()),
]


@pytest.mark.parametrize(("before", "after", "allow", "reasons"), MACHINES)
def test_another_machine_is_the_one_run_wide_reason(
    before: Machine, after: Machine, allow: bool, reasons: tuple[str, ...]
) -> None:
    assert machine_apart(before, after, allow_machine_change=allow) == reasons


@pytest.mark.parametrize(("before", "after", "allow", "reasons"), MACHINES)
def test_compare_names_another_machine_in_the_same_words(
    before: Machine, after: Machine, allow: bool, reasons: tuple[str, ...]
) -> None:
    runs = [
        RunRecord(1, run_id, "2026-01-01", m, {}, None, models={"m": F32}, results=(_result(),))
        for run_id, m in (("base", before), ("cur", after))
    ]
    (case,) = compare_runs(*runs, thresholds=Thresholds(allow_machine_change=allow)).cases
    assert case.reasons[: len(reasons)] == reasons
    assert (case.verdict is Verdict.NOT_COMPARABLE) is bool(reasons)
