"""A relative gate in a real session is judged against the baseline's case only where compare
would compare them (issue 37, items 7 and 13): pp1024 is never judged against pp64, nor q4
against f32 without --allow-model-change, nor a run on another machine without
--allow-machine-change; the words are compare's, and the exit rules fail closed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.core.types import (
    Case,
    Metric,
    RunRecord,
    Status,
    Unit,
    Verdict,
)
from harness.results.compare import Thresholds, compare_runs
from harness.results.fail_on import DEFAULT, FailOn, findings
from harness.results.store import load_run
from harness.runner.active_run import ActiveRun
from tests.runner.cases import gated_throughput_case

DECODE = "throughput.decode_tps"


def _case(path: Path, prompt_tokens: int) -> Case:
    return gated_throughput_case(path, "-5%", prompt_tokens=prompt_tokens)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunRecord]:
    """The fake model, and a baseline of its case recorded by a real session on this machine
    (so its machine is the one the sessions below record), its decode made far faster than
    anything the fake model does."""
    root = tmp_path_factory.mktemp("baseline")
    path = write_fake_model(root / "good", per_token_s=0.001)
    session = ActiveRun(root / "reports", [], run_id="base", allow_dirty_machine=True)
    try:
        session.run_case(_case(path, 8))
    finally:
        session.close_worker()
    record = load_run(root / "reports" / "base")
    fast = Metric(DECODE, Unit.TOKENS_PER_SECOND, (1e9, 1.01e9, 0.99e9))
    (result,) = record.results
    result = dataclasses.replace(result, status=Status.PASSED, metrics=(fast,), gates=())
    return path, dataclasses.replace(record, results=(result,))


def _baseline(
    record: RunRecord, prompt_tokens: int, other_files: bool, other_machine: bool
) -> RunRecord:
    (result,) = record.results
    result = dataclasses.replace(result, params={**result.params, "prompt_tokens": prompt_tokens})
    models = dict(record.models)
    if other_files:
        identity = models["good"]
        models["good"] = dataclasses.replace(
            identity, weights_bytes=(identity.weights_bytes or 0) + 1
        )
    machine = record.machine
    if other_machine:
        machine = dataclasses.replace(machine, cpu="another cpu")
    return dataclasses.replace(record, machine=machine, models=models, results=(result,))


FAILED = "throughput.decode_tps FAILED: -100.0%"

# (baseline's prompt_tokens, other model files, other machine, --allow-model-change,
#  --allow-machine-change, gate passed, in its message)
TABLE = [
    (8, False, False, False, False, False, FAILED),  # the same point, the same machine
    (
        64,
        False,
        False,
        False,
        False,
        None,
        "not comparable (params changed: prompt_tokens 64 -> 8)",
    ),
    (8, True, False, False, False, None, "not comparable (model files changed: weights"),
    (8, True, False, True, False, False, FAILED),  # variants on purpose
    (8, False, True, False, False, None, "not comparable (machine changed (cpu: another cpu -> "),
    (8, False, True, False, True, False, FAILED),  # another machine on purpose
    (64, False, True, False, True, None, "not comparable (params changed"),  # machines only
]


@pytest.mark.parametrize(
    (
        "base_tokens",
        "other_files",
        "other_machine",
        "allow_model",
        "allow_machine",
        "passed",
        "fragment",
    ),
    TABLE,
)
def test_a_relative_gate_is_judged_against_the_same_point_only(
    tmp_path: Path,
    recorded: tuple[Path, RunRecord],
    base_tokens: int,
    other_files: bool,
    other_machine: bool,
    allow_model: bool,
    allow_machine: bool,
    passed: bool | None,
    fragment: str,
) -> None:
    path, record = recorded
    baseline = _baseline(record, base_tokens, other_files, other_machine)
    session = ActiveRun(
        tmp_path / "reports",
        [],
        run_id="r1",
        baseline=baseline,
        allow_dirty_machine=True,  # the shared test machine is busy: judge it anyway
        allow_model_change=allow_model,
        allow_machine_change=allow_machine,
    )
    try:
        result = session.run_case(_case(path, 8))
    finally:
        session.close_worker()
    (gate,) = result.gates
    assert gate.passed is passed, gate.message
    assert fragment in gate.message
    assert result.status is (Status.PASSED if passed is None else Status.FAILED)
    # compare reads the two records by the same rule, in the same words
    thresholds = Thresholds(
        allow_model_change=allow_model,
        allow_machine_change=allow_machine,
        allow_dirty_machine=True,
    )
    current = load_run(tmp_path / "reports" / "r1")
    (case,) = compare_runs(baseline, current, thresholds=thresholds).cases
    if passed is None:
        assert case.verdict is Verdict.NOT_COMPARABLE
        assert f"({'; '.join(case.reasons)})" in gate.message
        # and the exit rules fail closed: the one gate is not judged, the case not comparable
        kinds = {f.kind for f in findings(current, compare_runs(baseline, current), DEFAULT)}
        assert {FailOn.UNJUDGED_GATES, FailOn.NOT_COMPARABLE} <= kinds
    else:
        assert case.verdict is not Verdict.NOT_COMPARABLE, case.reasons
