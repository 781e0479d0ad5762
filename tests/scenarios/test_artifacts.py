"""A scenario's typed artifacts (harness.scenarios.artifacts): read from the record field by
field, a value that does not fit reading as its default; written back as the record holds it."""

from __future__ import annotations

from typing import Any

import pytest

from harness.core.types import CaseResult, Status
from harness.scenarios.draft_checks import SpeculativeArtifacts

RECORDED: dict[str, Any] = {
    "draft": "zoo/draft",
    "num_draft_tokens": 3,
    "accepted_tokens": [2, None, 3],
    "drafted_tokens": [3, None, 3],
    "baseline": {"same server, per request": {"num_draft_tokens": 0}},
    "first_mismatch": None,
    "prompt_tokens": [12],  # recorded, not read by the section: ignored
}


def test_read_from_a_cases_artifacts() -> None:
    result = CaseResult("c", "s", "m", "speculative", Status.PASSED, artifacts=RECORDED)
    found = SpeculativeArtifacts.of(result)
    assert found.draft == "zoo/draft" and found.num_draft_tokens == 3
    assert found.accepted_tokens == (2, None, 3)
    assert found.total(found.accepted_tokens) == 5 and found.total(()) is None
    assert found.unchecked_baseline is None and found.first_mismatch is None


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("draft", {"not": "text"}),
        ("num_draft_tokens", "three"),
        ("accepted_tokens", "2,3"),
        ("baseline", 7),
        ("first_mismatch", ["a list"]),
    ],
)
def test_a_value_that_does_not_fit_reads_as_the_default(key: str, value: object) -> None:
    found = SpeculativeArtifacts.from_record({**RECORDED, key: value})
    assert getattr(found, key) == getattr(SpeculativeArtifacts(), key)


def test_written_as_the_record_holds_it_and_read_back() -> None:
    found = SpeculativeArtifacts.from_record(RECORDED)
    record = found.to_record()
    assert record["accepted_tokens"] == [2, None, 3] and "engine" not in record
    assert SpeculativeArtifacts.from_record(record) == found
    none = SpeculativeArtifacts.from_record({"baseline": "none: no switch; no twin: off"})
    assert none.unchecked_baseline == "none: no switch; no twin: off"
