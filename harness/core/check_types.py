"""A case's named checks, each with its own verdict: the comparable part of a contract case.

A scenario that runs several named checks in one case (``api_contracts``' 20, the template
contracts) rolls them into one case status; a check that goes from pass to fail goes unseen
when the case already failed. So each check's verdict is recorded as its own result,
``CaseResult.checks``, and compare, the pin-set comparison and bisect judge each check between two
runs as they judge a case's status (``harness.results.check_changes``).

Reasons are one line written by the check (counts and positions, never the model's text); the
evidence stays in the scenario's ``checks`` artifact, which the report shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class CheckStatus(str, Enum):
    """One check's verdict in one run."""

    PASS = "pass"
    WARN = "warn"  # held, with something to look at (a template folding a role, ...)
    FAIL = "fail"
    NOT_APPLICABLE = "not_applicable"  # cannot apply here (a server without tool support)
    UNJUDGED = "unjudged"  # could not be judged (the case's time ran out, a prompt-blind model)

    @property
    def judged(self) -> bool:
        """Whether the check said something of the thing under test (pass, warn or fail)."""
        return self in (CheckStatus.PASS, CheckStatus.WARN, CheckStatus.FAIL)

    @property
    def label(self) -> str:
        """``pass``, ``FAIL``, ``n.a.``: as a table cell shows it."""
        return LABELS[self]


LABELS = {
    CheckStatus.PASS: "pass",
    CheckStatus.WARN: "warn",
    CheckStatus.FAIL: "FAIL",
    CheckStatus.NOT_APPLICABLE: "n.a.",
    CheckStatus.UNJUDGED: "not judged",
}


@dataclass(frozen=True)
class CheckVerdict:
    """One named check of a case: its verdict and one line of why."""

    name: str
    status: CheckStatus
    reason: str = ""
