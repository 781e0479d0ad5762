"""``mlx-harness run``'s line per case: status, id, reason and the policy's warning, safe to
print to a terminal."""

from __future__ import annotations

import pytest

from harness.cli_run import case_line
from harness.preflight_types import PolicyAction, PreflightRecord
from harness.types import CaseResult, Status

WARNED = PreflightRecord(
    backend="mlx_lm", action=PolicyAction.WARN, code="backend_mismatch", message="no vision"
)


def _result(preflight: PreflightRecord | None, reason: str | None = None) -> CaseResult:
    return CaseResult("s::m::t", "s", "m", "t", Status.PASSED, reason=reason, preflight=preflight)


@pytest.mark.parametrize(
    ("result", "line"),
    [
        (_result(None), "     passed  s::m::t"),
        (_result(WARNED), "     passed  s::m::t  [warn backend_mismatch: no vision]"),
        (
            _result(PreflightRecord(backend="mlx_lm", action=PolicyAction.ALLOW, code="ok")),
            "     passed  s::m::t",
        ),
        (
            _result(PreflightRecord(action=PolicyAction.WARN, code="x", message="\x1b[2Jgone\n")),
            "     passed  s::m::t  [warn x: [2Jgone]",
        ),
    ],
    ids=["not_judged", "warned", "allowed", "escapes_removed"],
)
def test_case_line(result: CaseResult, line: str) -> None:
    assert case_line(result) == line
