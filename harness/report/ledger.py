"""Known-broken ledger: each expect entry of the run's suites, what it matched this run, and
whether it is due for a re-check (its ``recheck`` date is before the day the run started)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace

from harness.core.types import ExpectKind, LedgerEntry, RunRecord, Status
from harness.report.formatting import MISSING, STATUS_SYMBOLS, status_order
from harness.report.sections import CLOSING, Section
from harness.report.table import Cell, Column, Table
from harness.spec.ledger import is_overdue

FIXED = "fixed upstream, remove entry"


@dataclass(frozen=True)
class Ledger:
    table: Table
    entries: int
    overdue: int  # entries past their recheck date
    fixed: int  # entries with a case that passed although expected to fail


def run_date(run: RunRecord) -> dt.date | None:
    """The day the run started: the ledger's "today", so a re-rendered report says the same."""
    try:
        return dt.datetime.fromisoformat(run.started_at).date()
    except ValueError:
        return None


def merged_entries(run: RunRecord) -> list[LedgerEntry]:
    """The entries of every suite, once each (a shared ledger file is included by many)."""
    by_source: dict[str, LedgerEntry] = {}
    for suite in run.suites:
        for entry in suite.ledger:
            seen = by_source.get(entry.source)
            if seen is None:
                by_source[entry.source] = entry
            else:
                cases = tuple(dict.fromkeys([*seen.cases, *entry.cases]))
                by_source[entry.source] = replace(seen, cases=cases)
    return list(by_source.values())


def _outcome(entry: LedgerEntry, statuses: Mapping[str, Status]) -> Cell:
    counts = Counter(statuses[c] for c in entry.cases if c in statuses)
    if not entry.cases:
        return Cell("no case matched", css="dim")
    if not counts:
        return Cell(f"{len(entry.cases)} planned, none ran", css="dim")
    text = " · ".join(
        f"{STATUS_SYMBOLS[s]} {counts[s]} {s.value}" for s in sorted(counts, key=status_order)
    )
    if Status.XPASSED in counts:
        return Cell(text, note=FIXED, css="st-xpassed")
    return Cell(text)


def _recheck(entry: LedgerEntry, today: dt.date | None) -> Cell:
    if entry.recheck is None:
        return Cell(MISSING)
    if today is not None and is_overdue(entry.recheck, today):
        return Cell(entry.recheck, note="overdue: re-check it", css="st-failed")
    return Cell(entry.recheck)


def build(run: RunRecord) -> Ledger | None:
    entries = merged_entries(run)
    if not entries:
        return None
    today = run_date(run)
    statuses = {r.case_id: r.status for r in run.results}
    rows = tuple(_row(entry, statuses, today) for entry in entries)
    columns = (
        Column("entry", css="nowrap"),
        Column("matches"),
        Column("expect", css="nowrap"),
        Column("reason"),
        Column("recheck", css="nowrap"),
        Column("this run"),
    )
    overdue = sum(1 for e in entries if today is not None and is_overdue(e.recheck, today))
    fixed = sum(1 for row in rows if row[-1].note == FIXED)
    return Ledger(Table(columns, rows), len(entries), overdue, fixed)


def _row(
    entry: LedgerEntry, statuses: Mapping[str, Status], today: dt.date | None
) -> tuple[Cell, ...]:
    strict = entry.strict and entry.status is ExpectKind.XFAIL
    expect = entry.status.value + (" (strict)" if strict else "")
    return (
        Cell(_short(entry.source), title=entry.source),
        Cell(entry.match),
        Cell(expect),
        Cell.linked(entry.reason, entry.link, title=entry.link),
        _recheck(entry, today),
        _outcome(entry, statuses),
    )


def _short(source: str) -> str:
    """``known_broken.yaml:9`` of ``/abs/path/suites/known_broken.yaml:9``."""
    return source.replace("\\", "/").rsplit("/", 1)[-1]


SECTION = Section("ledger", "Known-broken ledger", build, order=CLOSING + 20)
