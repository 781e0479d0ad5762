"""The paired rule for per-item metrics: pairing by id, and the verdicts it gives."""

from __future__ import annotations

import math

import pytest

from harness.core.types import JSONValue, Verdict
from harness.results.paired import decide_paired, item_ids, pair

IDS = tuple(f"s{i:02d}" for i in range(8))
BASE = (0.5, 0.25, 0.3, 0.56, 0.57, 0.14, 0.25, 0.0)  # WER per clip, lower is better


def _shifted(by: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(round(b + d, 6) for b, d in zip(BASE, by, strict=True))


# (current values, higher_is_better, effect, verdict, p, differing, median difference)
CASES = [
    (BASE, False, 0.03, Verdict.UNCHANGED, None, 0, 0.0),  # a greedy rerun: identical
    (_shifted((0.1,) * 8), False, 0.03, Verdict.REGRESSED, 0.0078125, 8, 0.1),
    (_shifted((-0.05,) * 7 + (0.0,)), False, 0.03, Verdict.IMPROVED, 0.015625, 7, -0.05),
    (_shifted((0.1,) * 8), True, 0.03, Verdict.IMPROVED, 0.0078125, 8, 0.1),  # direction
    # one clip changed a lot: too few differing items for any p under 0.05
    (_shifted((0.5,) + (0.0,) * 7), False, 0.03, Verdict.INCONCLUSIVE, 1.0, 1, 0.0),
    # 5 of 8 worse: 2 / 2^5 = 0.0625 at best
    (_shifted((0.1,) * 5 + (0.0,) * 3), False, 0.03, Verdict.INCONCLUSIVE, 0.0625, 5, 0.1),
    # all 8 one way but tiny: under the minimum effect
    (_shifted((0.0001,) * 8), False, 0.03, Verdict.UNCHANGED, 0.0078125, 8, 0.0001),
    # mixed directions over 8 items: not significant
    (
        _shifted((0.2, -0.2, 0.15, -0.1, 0.3, 0.05, -0.05, 0.1)),
        False,
        0.03,
        Verdict.INCONCLUSIVE,
        0.484375,  # scipy.stats.wilcoxon of these float differences
        8,
        0.075,
    ),
]


@pytest.mark.parametrize(
    ("current", "higher", "effect", "verdict", "p", "differing", "median"), CASES
)
def test_paired_verdicts(
    current: tuple[float, ...],
    higher: bool,
    effect: float,
    verdict: Verdict,
    p: float | None,
    differing: int,
    median: float,
) -> None:
    decision = decide_paired(IDS, BASE, IDS, current, higher_is_better=higher, effect=effect)
    assert decision.verdict is verdict, decision.note
    assert decision.p_value == (None if p is None else pytest.approx(p))
    assert decision.summary is not None
    assert decision.summary.items == 8
    assert decision.summary.differing == differing
    assert decision.summary.median_difference == pytest.approx(median)


def test_inconclusive_for_too_few_differing_items_asks_for_items_not_repeats() -> None:
    current = _shifted((0.5,) + (0.0,) * 7)
    decision = decide_paired(IDS, BASE, IDS, current, higher_is_better=False, effect=0.03)
    assert "needs >= 6 differing items" in decision.note
    assert "not more repeats" in decision.note


def test_items_pair_by_id_not_by_position() -> None:
    shuffled = IDS[::-1]
    current = tuple(reversed(BASE))  # the same values, stored in the other order
    decision = decide_paired(IDS, BASE, shuffled, current, higher_is_better=False, effect=0.03)
    assert decision.verdict is Verdict.UNCHANGED
    assert decision.note == "identical on all 8 items"
    assert pair(IDS[:2], BASE[:2], ("s01", "s00"), (9.0, 8.0)) == [(0.5, 8.0), (0.25, 9.0)]


@pytest.mark.parametrize(
    ("cur_ids", "reason"),
    [
        ((*IDS[:7], "s99"), "items differ (8 -> 8): 1 only in the baseline (s07); "),
        (IDS[:4], "items differ (8 -> 4): 4 only in the baseline (s04, s05, s06 and 1 more)"),
        ((*IDS[:7], "s00"), "items not paired: the current names item 's00' twice"),
    ],
)
def test_different_item_sets_are_not_comparable(cur_ids: tuple[str, ...], reason: str) -> None:
    current = tuple(0.1 for _ in cur_ids)
    decision = decide_paired(IDS, BASE, cur_ids, current, higher_is_better=False, effect=0.03)
    assert decision.verdict is Verdict.NOT_COMPARABLE
    assert decision.note.startswith(reason)
    assert decision.summary is None
    assert decision.p_value is None


def test_a_non_finite_item_is_inconclusive() -> None:
    current = (math.inf, *BASE[1:])
    decision = decide_paired(IDS, BASE, IDS, current, higher_is_better=False, effect=0.03)
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert "finite" in decision.note


def test_change_is_relative_to_the_item_mean() -> None:
    current = _shifted((0.1,) * 8)
    decision = decide_paired(IDS, BASE, IDS, current, higher_is_better=False, effect=0.03)
    assert decision.change == pytest.approx(0.1 / (sum(BASE) / 8))


@pytest.mark.parametrize(
    ("artifacts", "count", "expected"),
    [
        ({"items": [{"id": "a"}, {"id": "b"}]}, 2, ("a", "b")),  # speech_to_text clips
        ({"items": [{"id": 3}, {"id": 4}]}, 2, ("3", "4")),
        ({"items": 3, "item_tokens": [256, 256, 256]}, 3, ("#1", "#2", "#3")),  # quality
        ({}, 2, ("#1", "#2")),  # no items artifact: by position
        ({"items": [{"id": "a"}]}, 2, ("#1", "#2")),  # rows that are not one per sample
        ({"items": [{"text": "a"}, {"text": "b"}]}, 2, ("#1", "#2")),  # rows without ids
    ],
)
def test_item_ids(artifacts: dict[str, JSONValue], count: int, expected: tuple[str, ...]) -> None:
    assert item_ids(artifacts, count) == expected
