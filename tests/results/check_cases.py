"""Contract cases built in memory: a case's named checks as a string of verdicts, and runs of
them under pin sets, for the check-by-check tests of compare, the matrix and bisect."""

from __future__ import annotations

from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.types import CaseResult, Machine, ModelIdentity, PinSetInfo, RunRecord, Status

MACHINE = Machine("Linux", "6", "x86_64", "cpu", 2, 1 << 34, "3.11", blas="openblas")
CASE_ID = "s::srv::api_contracts"
WORDS = {
    "pass": CheckStatus.PASS,
    "warn": CheckStatus.WARN,
    "fail": CheckStatus.FAIL,
    "n.a.": CheckStatus.NOT_APPLICABLE,
    "unjudged": CheckStatus.UNJUDGED,
}


def checks(spec: str) -> tuple[CheckVerdict, ...]:
    """``"seed=pass concurrent=fail"`` as verdicts, each with a reason naming it."""
    out = []
    for item in spec.split():
        name, word = item.split("=")
        out.append(CheckVerdict(name, WORDS[word], f"{name} was {word}"))
    return tuple(out)


def contract_case(spec: str, status: Status | None = None, case_id: str = CASE_ID) -> CaseResult:
    """An ``api_contracts`` case with the checks of ``spec``; its status fails when one does
    (as the scenario's does), unless given."""
    found = checks(spec)
    failing = [c.name for c in found if c.status is CheckStatus.FAIL]
    if status is None:
        status = Status.FAILED if failing else Status.PASSED
    reason = f"API contract checks failed: {', '.join(failing)}" if failing else None
    model = case_id.split("::")[1]
    return CaseResult(case_id, "s", model, "api_contracts", status, reason=reason, checks=found)


def contract_run(name: str, cases: list[CaseResult], mlx_lm: str = "0.31.0") -> RunRecord:
    identity = ModelIdentity("srv", None, "http", server="mlx_lm")
    return RunRecord(
        1,
        f"run-{name}",
        "2026-11-23T01:00:00+00:00",
        MACHINE,
        {"mlx-lm": mlx_lm},
        "sha",
        models={c.model: identity for c in cases},
        results=tuple(cases),
        finished_at="2026-11-23T01:00:42+00:00",
        pin_set=PinSetInfo(name, (f"mlx-lm=={mlx_lm}",), {"mlx-lm": mlx_lm}),
    )
