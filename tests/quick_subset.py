"""A table of test cases split into the quick ones every ``make test`` runs and the rest, which
only ``make test-nightly`` runs (the ``nightly`` mark): the quick ones cover each kind of input
and each driver at least once; the whole table still runs every night."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

import pytest
from _pytest.mark.structures import ParameterSet


def quick_subset(
    cases: Iterable[Sequence[Any]], ids: Sequence[str], quick: Collection[str]
) -> list[ParameterSet]:
    """Each case as a ``pytest.param`` with its id; those whose id is not in ``quick`` nightly."""
    rows = list(cases)
    unknown = set(quick) - set(ids)
    assert not unknown, f"quick ids that name no case: {sorted(unknown)}"
    assert len(rows) == len(ids), "one id a case"
    return [
        pytest.param(*row, id=i, marks=() if i in quick else (pytest.mark.nightly,))
        for row, i in zip(rows, ids, strict=True)
    ]
