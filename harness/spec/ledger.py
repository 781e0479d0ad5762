"""The known-broken ledger: ``expect:`` entries (a suite's own and included files such as
``suites/known_broken.yaml``) matched against cases, recorded with the run, re-checked by date.

An entry matches a case when its ``model`` and ``scenario`` globs match and, when given, its
``family`` glob matches the model's family (config.json ``model_type``, from the probe), its
``backend`` glob the backend and its ``versions`` the installed packages (PEP 440 specifiers:
``{transformers: ">=5.24"}`` applies under transformers 5.24 and later only, so an entry for an
upstream break does not xfail the cases of an environment where they pass); the first matching
entry wins. ``today`` and the installed versions are always passed in.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
from collections.abc import Mapping, Sequence

from harness.core.types import Case, Expectation, ExpectKind, LedgerEntry
from harness.spec.errors import SuiteError
from harness.spec.loaded import LoadedSuite, SourcedExpect
from harness.spec.versions import versions_match


def _glob(value: str | None, pattern: str | None) -> bool:
    if pattern is None:
        return True
    return value is not None and fnmatch.fnmatchcase(value, pattern)


def expectation_for(
    expect: Sequence[SourcedExpect],
    *,
    model: str,
    scenario: str,
    family: str | None,
    backend: str,
    installed: Mapping[str, str],
    entry_id: str | None = None,
    checks: object = None,
) -> Expectation | None:
    """The first entry of ``expect`` that matches, as the case's expectation (``installed``:
    the environment's versions by normalised name, for entries with ``versions:``). An entry's
    ``scenario:`` globs match the scenario's name or the suite entry's ``id:``. An entry that
    names checks matches only a case that runs one of them (``checks``: the case's ``checks``
    param, defaults filled in), so it never takes the place of the entry a case needs."""
    runs = set(checks) if isinstance(checks, list | tuple) else set()
    for sourced in expect:
        entry = sourced.entry
        if entry.checks and not runs & set(entry.checks):
            continue
        if (
            _glob(model, entry.model)
            and any(_glob(scenario, g) or _glob(entry_id, g) for g in entry.scenario)
            and _glob(family, entry.family)
            and _glob(backend, entry.backend)
            and versions_match(entry.versions, installed)
        ):
            return Expectation(
                kind=ExpectKind(entry.status),
                reason=entry.reason,
                link=entry.link,
                recheck=entry.recheck.isoformat() if entry.recheck else None,
                strict=entry.strict,
                source=sourced.source,
                checks=tuple(entry.checks),
            )
    return None


def needs_family(expect: Sequence[SourcedExpect]) -> bool:
    return any(s.entry.family is not None for s in expect)


def needs_versions(expect: Sequence[SourcedExpect]) -> bool:
    return any(s.entry.versions for s in expect)


def is_overdue(recheck: dt.date | str | None, today: dt.date) -> bool:
    """Whether an entry's re-check date has passed (the day itself is not overdue)."""
    if recheck is None:
        return False
    if isinstance(recheck, str):
        try:
            recheck = dt.date.fromisoformat(recheck)
        except ValueError:
            return False
    return recheck < today


def ledger_entry(sourced: SourcedExpect, cases: Sequence[str] = ()) -> LedgerEntry:
    entry = sourced.entry
    return LedgerEntry(
        source=sourced.source,
        status=ExpectKind(entry.status),
        reason=entry.reason,
        model=entry.model,
        scenario=", ".join(entry.scenario),
        family=entry.family,
        backend=entry.backend,
        versions=", ".join(f"{n}{v}" for n, v in entry.versions.items()) or None,
        link=entry.link,
        recheck=entry.recheck.isoformat() if entry.recheck else None,
        strict=entry.strict,
        cases=tuple(cases),
    )


def ledger_entries(loaded: LoadedSuite, cases: Sequence[Case]) -> tuple[LedgerEntry, ...]:
    """Every expect entry of the suite, with the ids of the planned cases it matched."""
    matched: dict[str, list[str]] = {}
    for case in cases:
        if case.expectation is not None and case.expectation.source is not None:
            matched.setdefault(case.expectation.source, []).append(case.case_id)
    return tuple(ledger_entry(s, matched.get(s.source, ())) for s in loaded.expect)


def overdue_warnings(loaded: LoadedSuite, today: dt.date) -> list[SuiteError]:
    """One warning line per entry whose re-check date is before ``today``."""
    warnings = []
    for sourced in loaded.expect:
        entry = sourced.entry
        if entry.recheck is not None and is_overdue(entry.recheck, today):
            warnings.append(
                SuiteError(
                    str(sourced.path),
                    sourced.line,
                    sourced.column,
                    f"warning: known-broken entry ({ledger_entry(sourced).match}) is past its "
                    f"recheck date {entry.recheck.isoformat()}: {entry.reason}",
                    "run it without the entry; if it passes remove the entry, else move 'recheck:'",
                )
            )
    return warnings
