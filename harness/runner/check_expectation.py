"""A known-broken entry that names checks (``checks: [continuation]``): the case xfails when
those checks are all that failed, fails as usual when another check fails too, and XPASSes
(strict) when they all pass, so a case whose one check is known broken upstream still shows
every other check's regression."""

from __future__ import annotations

from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.types import Expectation, Status


def judge_checks(
    expectation: Expectation,
    status: Status,
    reason: str | None,
    checks: tuple[CheckVerdict, ...],
) -> tuple[Status, str | None]:
    """The case's status and reason under ``expectation`` (an xfail naming checks)."""
    known = set(expectation.checks)
    failing = [c for c in checks if c.status is CheckStatus.FAIL]
    if status.is_failing:
        if failing and all(c.name in known for c in failing):
            got = "; ".join(f"{c.name}: {c.reason}" for c in failing)
            return Status.XFAILED, f"known: {expectation.reason} (got {status.value}: {got})"
        return status, reason
    listed = [c for c in checks if c.name in known]
    if (
        status is Status.PASSED
        and expectation.strict
        and listed
        and all(c.status is CheckStatus.PASS for c in listed)
    ):
        names = ", ".join(c.name for c in listed)
        entry = f" {expectation.source}" if expectation.source else ""
        return (
            Status.XPASSED,
            f"XPASS: fixed upstream, remove entry{entry} (expected {names} to fail: "
            f"{expectation.reason})",
        )
    return status, reason
