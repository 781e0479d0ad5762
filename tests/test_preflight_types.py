"""The preflight record's derived values: its policy line and whether its estimate is sized
for the case."""

from __future__ import annotations

import pytest

from harness.core.preflight_types import ContextSource, MemoryRecord, PolicyAction, PreflightRecord
from harness.probe.policy import Action


@pytest.mark.parametrize(
    ("record", "policy"),
    [
        (
            PreflightRecord(action=PolicyAction.BLOCK, code="capability_mismatch"),
            "block capability_mismatch",
        ),
        (PreflightRecord(action=PolicyAction.ALLOW, code="ok"), "allow ok"),
        (PreflightRecord(backend="fake", note="no probe"), None),
    ],
    ids=["block", "allow", "not_judged"],
)
def test_policy(record: PreflightRecord, policy: str | None) -> None:
    assert record.policy == policy


@pytest.mark.parametrize(
    ("source", "comparable"), [(ContextSource.SCENARIO, True), (ContextSource.DEFAULT, False)]
)
def test_comparable_only_when_sized_for_the_scenario(
    source: ContextSource, comparable: bool
) -> None:
    assert PreflightRecord(context_source=source).comparable is comparable


def test_components_are_the_parts_of_the_peak() -> None:
    memory = MemoryRecord(weights_bytes=4, kv_cache_bytes=3, state_bytes=2, activation_bytes=1)
    assert dict(memory.components) == {
        "weights_bytes": 4,
        "kv_cache_bytes": 3,
        "state_bytes": 2,
        "activation_bytes": 1,
    }


def test_actions_are_the_policys() -> None:
    """The record keeps the policy's actions by value (it may not import the probe)."""
    assert [a.value for a in PolicyAction] == [a.value for a in Action]
