"""A case's named checks between two runs: each check whose verdict changed, judged on its own.

A contract case (``api_contracts``, ``template_contracts``) rolls its checks into one status, so
a check that goes from pass to fail is invisible in the status when the case already failed.
Compare, the pin-set comparison and bisect therefore also judge each check (``CaseResult.checks``)
by its name, whatever the two statuses are, with the verdicts a case's status change gets:

- ``newly_failing``: it fails now and did not (pass, warn, n.a. or not judged) before;
- ``fixed``: it failed before and passes (or warns) now;
- ``regressed`` / ``improved``: pass -> warn / warn -> pass;
- ``inconclusive``: one side did not judge it (not applicable, not judged: the case's time ran
  out, a prompt-blind model), so whether it still holds is unknown;
- ``new`` / ``removed``: only one run ran it (a check added to the scenario, or left out by
  its ``checks:`` param).

A case that recorded no checks in one of the runs (it crashed, errored before its checks, was
skipped) has no check changes: its status change says it.

A check with the same verdict both sides is no change and is not listed. Pure: reads two
results, returns data.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.types import CaseResult, Verdict

# worst first: how a list of check changes is ordered, and which one names a row
CHANGE_ORDER = (
    Verdict.NEWLY_FAILING,
    Verdict.REGRESSED,
    Verdict.INCONCLUSIVE,
    Verdict.FIXED,
    Verdict.IMPROVED,
    Verdict.NEW,
    Verdict.REMOVED,
)
HELD = frozenset({CheckStatus.PASS, CheckStatus.WARN})


@dataclass(frozen=True)
class CheckChange:
    """One check whose verdict differs between two runs of a case."""

    check: str
    before: CheckStatus | None  # None: the earlier run did not run it
    after: CheckStatus | None  # None: the later run did not run it
    verdict: Verdict
    reason: str = ""  # the earlier run's for a fix (what failed), else the later run's

    @property
    def line(self) -> str:
        """``concurrent: pass -> FAIL (the 4 answers ...)``."""
        arrow = f"{_label(self.before)} -> {_label(self.after)}"
        return f"{self.check}: {arrow}" + (f" ({self.reason})" if self.reason else "")


def _label(status: CheckStatus | None) -> str:
    return status.label if status is not None else "not run"


def change_verdict(before: CheckStatus | None, after: CheckStatus | None) -> Verdict | None:
    """What a check's move from ``before`` to ``after`` is (None: the same verdict)."""
    if before is after:
        return None
    if before is None:
        return Verdict.NEW
    if after is None:
        return Verdict.REMOVED
    if after is CheckStatus.FAIL:
        return Verdict.NEWLY_FAILING
    if before is CheckStatus.FAIL:
        return Verdict.FIXED if after in HELD else Verdict.INCONCLUSIVE
    if before in HELD and after in HELD:
        return Verdict.REGRESSED if after is CheckStatus.WARN else Verdict.IMPROVED
    return Verdict.INCONCLUSIVE  # judged on one side only (n.a., not judged)


def check_changes(base: CaseResult, cur: CaseResult) -> tuple[CheckChange, ...]:
    """Each check of the two results whose verdict differs, worst change first (the current
    run's order within one verdict). A result with no checks at all (the case crashed, was
    skipped, its scenario has none) gives none: its status is the whole story."""
    if not base.checks or not cur.checks:
        return ()
    before = {c.name: c for c in base.checks}
    after = {c.name: c for c in cur.checks}
    names = list(dict.fromkeys([*after, *before]))
    found = []
    for name in names:
        b, a = before.get(name), after.get(name)
        verdict = change_verdict(b.status if b else None, a.status if a else None)
        if verdict is not None:
            found.append(CheckChange(name, _status(b), _status(a), verdict, _why(verdict, b, a)))
    return tuple(sorted(found, key=lambda c: CHANGE_ORDER.index(c.verdict)))


def _status(check: CheckVerdict | None) -> CheckStatus | None:
    return check.status if check is not None else None


def _why(verdict: Verdict, before: CheckVerdict | None, after: CheckVerdict | None) -> str:
    """The reason of the run that says most: the earlier one for a fix (what failed) or a
    removed check, else the later one."""
    if verdict is Verdict.FIXED or after is None:
        return before.reason if before is not None else ""
    return after.reason
