"""A relative gate in a real session is judged against the baseline's case only where compare
would compare them (issue 37, item 7): pp1024 is never judged against pp64, nor q4 against f32
without --allow-model-change."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.core.types import (
    Case,
    CaseResult,
    Machine,
    Metric,
    ModelIdentity,
    ModelRef,
    ModelSource,
    RunRecord,
    Status,
    Unit,
)
from harness.runner.identity import model_identity
from harness.runner.session import RunSession
from harness.spec.gates import parse_gate

DECODE = "throughput.decode_tps"
MACHINE = Machine("Linux", "6", "x86_64", "cpu", 2, 1 << 34, "3.11")


def _case(path: Path, prompt_tokens: int) -> Case:
    return Case(
        case_id="t::good::throughput",
        suite="t",
        suite_path="t.suite.yaml",
        model=ModelRef("good", ModelSource.PATH, str(path), "fake", (), str(path)),
        scenario="throughput",
        params={"prompt_tokens": prompt_tokens, "gen_tokens": 4, "ignore_eos": True},
        repeats=2,
        warmup=0,
        timeout_s=20.0,
        gates=(parse_gate(DECODE, "-5%"),),
    )


def _baseline(identity: ModelIdentity, prompt_tokens: int) -> RunRecord:
    """A baseline whose decode was far faster than anything the fake model does."""
    fast = Metric(DECODE, Unit.TOKENS_PER_SECOND, (1e9, 1.01e9, 0.99e9))
    result = CaseResult(
        "t::good::throughput",
        "t",
        "good",
        "throughput",
        Status.PASSED,
        params={"prompt_tokens": prompt_tokens, "gen_tokens": 4, "ignore_eos": True},
        metrics=(fast,),
    )
    models = {"good": identity}
    return RunRecord(1, "base", "2026-01-01", MACHINE, {}, "sha", models=models, results=(result,))


@pytest.mark.parametrize(
    ("base_tokens", "other_files", "allow", "passed", "fragment"),
    [
        (64, False, False, None, "not comparable (params changed: prompt_tokens 64 -> 8)"),
        (8, True, False, None, "not comparable (model files changed: weights"),
        (8, True, True, False, "throughput.decode_tps FAILED: -100.0%"),  # variants on purpose
        (8, False, False, False, "throughput.decode_tps FAILED: -100.0%"),  # the same point
    ],
)
def test_a_relative_gate_is_judged_against_the_same_point_only(
    tmp_path: Path,
    base_tokens: int,
    other_files: bool,
    allow: bool,
    passed: bool | None,
    fragment: str,
) -> None:
    path = write_fake_model(tmp_path / "good", per_token_s=0.001)
    case = _case(path, 8)
    identity = model_identity(case.model)
    if other_files:
        identity = dataclasses.replace(identity, weights_bytes=(identity.weights_bytes or 0) + 1)
    session = RunSession(
        tmp_path / "reports",
        [],
        run_id="r1",
        baseline=_baseline(identity, base_tokens),
        allow_dirty_machine=True,  # the shared test machine is busy: judge it anyway
        allow_model_change=allow,
    )
    try:
        result = session.run_case(case)
    finally:
        session.close_worker()
    (gate,) = result.gates
    assert gate.passed is passed, gate.message
    assert fragment in gate.message
    assert result.status is (Status.PASSED if passed is None else Status.FAILED)
