"""The ``checks`` artifact of a contract case (api_contracts, template_contracts): its entries
by name, each entry's verdict, and the check names of several cases in their catalog's order."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, TypeVar

from harness.core.types import CaseResult

V = TypeVar("V", bound=Enum)


def checks_by_name(result: CaseResult) -> dict[str, Mapping[str, Any]]:
    """The case's ``checks`` entries by their name; entries without one (or not mappings) are
    left out, as is an artifact that is no list."""
    entries = result.artifacts.get("checks")
    found: dict[str, Mapping[str, Any]] = {}
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            found[entry["name"]] = entry
    return found


def verdict_of(entry: Mapping[str, Any] | None, verdicts: type[V]) -> V | None:
    """The entry's ``verdict`` as one of ``verdicts``; None without an entry or a known verdict."""
    try:
        return verdicts(entry.get("verdict")) if entry is not None else None
    except ValueError:
        return None


def check_names(per_case: Sequence[Mapping[str, Any]], catalog: Iterable[str]) -> list[str]:
    """The check names of all cases: the catalog's order, then any name the catalog no longer
    has (an older run), sorted."""
    order = list(catalog)
    seen = {name for checks in per_case for name in checks}
    return [n for n in order if n in seen] + sorted(seen - set(order))
