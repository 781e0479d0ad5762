"""The check records of a contract case (api_contracts, template_contracts: each scenario's
typed artifacts hold them): by name, each one's verdict, and the check names of several cases in
their catalog's order."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Protocol, TypeVar

V = TypeVar("V", bound=Enum)


class CheckRecord(Protocol):
    """A check's record: its name and its verdict word."""

    @property
    def name(self) -> str: ...

    @property
    def verdict(self) -> str | None: ...


R = TypeVar("R", bound=CheckRecord)


def checks_by_name(records: Iterable[R]) -> dict[str, R]:
    """The records by their name (a name given twice: its last record)."""
    return {record.name: record for record in records}


def verdict_of(entry: CheckRecord | None, verdicts: type[V]) -> V | None:
    """The record's verdict as one of ``verdicts``; None without a record or a known verdict."""
    if entry is None or entry.verdict is None:
        return None
    try:
        return verdicts(entry.verdict)
    except ValueError:
        return None


def check_names(per_case: Sequence[Mapping[str, object]], catalog: Iterable[str]) -> list[str]:
    """The check names of all cases: the catalog's order, then any name the catalog no longer
    has (an older run), sorted."""
    order = list(catalog)
    seen = {name for checks in per_case for name in checks}
    return [n for n in order if n in seen] + sorted(seen - set(order))
