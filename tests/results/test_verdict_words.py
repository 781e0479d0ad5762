"""Verdict words that cannot contradict (issue 37, item 8): a change over the minimum effect
that is not significant is inconclusive, never unchanged; a note names the reason that holds;
improved and regressed are told apart by word, marker and colour."""

from __future__ import annotations

import pytest

from harness.core.types import Unit, Verdict
from harness.report.comparison import VERDICT_CSS, VERDICT_LABEL
from harness.report.pin_matrix import STEP_CSS, STEP_LABEL
from harness.results.significance import decide

# (baseline, current, unit, verdict, note); higher is better for rates, lower for seconds
TABLE = [
    # the row: +9.1% in seconds, p=1, 0.1 ms apart: the samples cannot tell
    (
        (0.0010, 0.0012, 0.0011, 0.0013, 0.0009),
        (0.0009, 0.0013, 0.0012, 0.0014, 0.0010),
        Unit.SECONDS,
        Verdict.INCONCLUSIVE,
        "p=0.672, not significant at alpha 0.05; 0.1 ms apart, under the 1 ms timer jitter",
    ),
    # significant, over the effect, yet under the timer's jitter: unchanged, saying why
    (
        (0.0100,) * 5,
        (0.0105,) * 4 + (0.0106,),
        Unit.SECONDS,
        Verdict.UNCHANGED,
        "p=0.00558, 0.5 ms apart, under the 1 ms timer jitter",
    ),
    # under the minimum effect: unchanged, significant or not
    (
        (100.0, 101.0, 99.0, 100.5, 99.5),
        (101.0, 102.0, 100.0, 101.5, 100.5),
        Unit.TOKENS_PER_SECOND,
        Verdict.UNCHANGED,
        "p=0.114, under the 3% minimum effect",
    ),
    # over the effect, not significant: inconclusive
    (
        (100.0, 140.0, 60.0, 120.0, 80.0),
        (110.0, 150.0, 70.0, 130.0, 90.0),
        Unit.TOKENS_PER_SECOND,
        Verdict.INCONCLUSIVE,
        "p=0.69, not significant at alpha 0.05",
    ),
    # over the effect, significant: moved, the direction from the unit
    (
        (100.0, 101.0, 99.0, 100.5, 99.5),
        (90.0, 91.0, 89.0, 90.5, 89.5),
        Unit.TOKENS_PER_SECOND,
        Verdict.REGRESSED,
        "p=0.00794, minimum effect 3%",
    ),
    (
        (1.0, 1.01, 0.99, 1.005, 0.995),
        (0.9, 0.91, 0.89, 0.905, 0.895),
        Unit.SECONDS,
        Verdict.IMPROVED,
        "p=0.00794, minimum effect 3%",
    ),
    # a count recorded once a case under the jitter: says the jitter, not the effect
    (
        (0.0010,),
        (0.0012,),
        Unit.SECONDS,
        Verdict.UNCHANGED,
        "a count 0.2 ms apart, under the 1 ms timer jitter (too few samples for a test)",
    ),
]


@pytest.mark.parametrize(("base", "cur", "unit", "verdict", "note"), TABLE)
def test_the_verdict_and_its_note_agree(
    base: tuple[float, ...], cur: tuple[float, ...], unit: Unit, verdict: Verdict, note: str
) -> None:
    once = len(base) == 1
    got = decide(
        base, cur, unit=unit, higher_is_better=unit is not Unit.SECONDS, effect=0.03,
        once_a_case=once,
    )  # fmt: skip
    assert got.verdict is verdict, got
    if note is not None:
        assert got.note == note
    else:
        assert (
            got.note
            == "a count 0.2 ms apart, under the 1 ms timer jitter (too few samples for a test)"
        )
    # the note never claims a minimum effect the change is over
    if abs(got.change) >= 0.03:
        assert "under the 3% minimum effect" not in got.note
    # over the minimum effect and not significant is never unchanged
    if abs(got.change) >= 0.03 and got.p_value is not None and got.p_value >= 0.05:
        assert got.verdict is Verdict.INCONCLUSIVE


GREEN, RED = ("🟢", "🟩"), ("🔴", "🟥")


@pytest.mark.parametrize(("labels", "css"), [(VERDICT_LABEL, VERDICT_CSS), (STEP_LABEL, STEP_CSS)])
def test_improved_and_regressed_are_told_apart(
    labels: dict[Verdict, str], css: dict[Verdict, str]
) -> None:
    for verdict, colours, style in (
        (Verdict.IMPROVED, GREEN, "st-passed"),
        (Verdict.FIXED, GREEN, "st-passed"),
        (Verdict.REGRESSED, RED, "st-failed"),
    ):
        marker, word = labels[verdict].split(" ", 1)
        assert marker in colours and word == verdict.value
        assert css[verdict] == style
    assert labels[Verdict.NEWLY_FAILING].split(" ", 1)[0] in RED
    markers = [label.split(" ", 1)[0] for label in labels.values()]
    assert len(set(markers)) == len(markers)  # no two verdicts share a marker
