"""A known-broken entry that names checks: the case xfails only when those checks are all that
failed; another check's failure still fails it; a strict entry whose checks all pass XPASSes."""

from __future__ import annotations

import pytest

from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.types import Case, Expectation, ExpectKind, ModelRef, ModelSource, Status
from harness.runner.judge import judge

KNOWN = Expectation(
    ExpectKind.XFAIL, "dies on an exact hit", source="k.yaml:3", checks=("continuation",)
)
LOOSE = Expectation(ExpectKind.XFAIL, "flaky", strict=False, checks=("continuation",))

P, F, NA = CheckStatus.PASS, CheckStatus.FAIL, CheckStatus.NOT_APPLICABLE


def _case(expectation: Expectation) -> Case:
    ref = ModelRef("m", ModelSource.PATH, "m", "http")
    return Case(
        "s::m::api_contracts",
        "s",
        "s.suite.yaml",
        ref,
        "api_contracts",
        {},
        expectation=expectation,
    )


def _checks(**verdicts: CheckStatus) -> tuple[CheckVerdict, ...]:
    return tuple(CheckVerdict(name, status, f"{name} said so") for name, status in verdicts.items())


CASES = [
    # (expectation, the case's status, its checks, status after, start of the reason after)
    (
        KNOWN,
        Status.FAILED,
        _checks(seed=P, continuation=F),
        Status.XFAILED,
        "known: dies on an exact hit (got failed: continuation: continuation said so)",
    ),
    (KNOWN, Status.FAILED, _checks(seed=F, continuation=F), Status.FAILED, "2 checks failed"),
    (KNOWN, Status.FAILED, _checks(seed=F, continuation=P), Status.FAILED, "2 checks failed"),
    # a case that failed with no failing check (a gate, a crash) is not this entry's bug
    (KNOWN, Status.ERRORED, _checks(seed=P), Status.ERRORED, "2 checks failed"),
    (KNOWN, Status.PASSED, _checks(seed=P, continuation=P), Status.XPASSED, "XPASS: fixed"),
    (KNOWN, Status.PASSED, _checks(seed=P, continuation=NA), Status.PASSED, "2 checks failed"),
    (KNOWN, Status.PASSED, _checks(seed=P), Status.PASSED, "2 checks failed"),
    (LOOSE, Status.PASSED, _checks(continuation=P), Status.PASSED, "2 checks failed"),
]


@pytest.mark.parametrize(("expectation", "status", "checks", "after", "reason"), CASES)
def test_an_entry_that_names_checks(
    expectation: Expectation,
    status: Status,
    checks: tuple[CheckVerdict, ...],
    after: Status,
    reason: str,
) -> None:
    got, gates, why = judge(_case(expectation), status, (), "2 checks failed", {}, checks=checks)
    assert (got, gates) == (after, ())
    assert why is not None and why.startswith(reason), why


def test_the_xpass_names_the_entry_and_its_checks() -> None:
    checks = _checks(continuation=P)
    _, _, why = judge(_case(KNOWN), Status.PASSED, (), None, {}, checks=checks)
    assert why == (
        "XPASS: fixed upstream, remove entry k.yaml:3 (expected continuation to fail: "
        "dies on an exact hit)"
    )
