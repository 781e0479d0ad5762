"""Argument values after normalisation: kinds apart at every depth, and the two string modes."""

from __future__ import annotations

from typing import Any

import pytest

from harness.toolcalls.values import StringMatch, acceptable, normalise, normalise_text


@pytest.mark.parametrize(
    ("value", "choices", "ok"),
    [
        ("New  York", ("new york",), True),
        (1, (1.0,), True),
        (True, (1,), False),
        (1, (True,), False),
        ("1", (1,), False),
        (None, (None,), True),
        (["A", "b"], (["a", "B"],), True),
        (["a"], (["a", "b"],), False),
        ({"k": " V "}, ({"k": "v"},), True),
        ([True], ([1],), False),  # a boolean is no number inside a list either
        ([1], ([True],), False),
        ({"k": [0]}, ({"k": [False]},), False),
        ([1, 2.0], ([1.0, 2],), True),
        ("Nashville TN", ("Nashville, TN",), False),
    ],
)
def test_acceptable(value: Any, choices: tuple[Any, ...], ok: bool) -> None:
    assert acceptable(value, choices) is ok


def test_normalise_keeps_kinds_apart() -> None:
    assert normalise(" A\tB ") == "a b"
    assert normalise(True) is True and normalise(2) == 2.0


# (text, strict, BFCL): BFCL drops spaces and ",./-_*^", lowercases, turns ' into "
TEXTS = [
    ("Nashville, TN", "nashville, tn", "nashvilletn"),
    ("  New\tYork ", "new york", "new\tyork"),  # BFCL drops spaces only, not tabs
    ("a-b_c/d.e*f^g", "a-b_c/d.e*f^g", "abcdefg"),
    ("it's", "it's", 'it"s'),
    ("Straße", "strasse", "straße"),  # casefold vs BFCL's lower()
]


@pytest.mark.parametrize(("text", "strict", "bfcl"), TEXTS)
def test_string_modes(text: str, strict: str, bfcl: str) -> None:
    assert normalise_text(text) == normalise_text(text, StringMatch.STRICT) == strict
    assert normalise_text(text, StringMatch.BFCL) == bfcl


def test_bfcl_mode_reaches_into_lists_and_objects() -> None:
    choices = ([{"city": "Nashville, TN"}, "Los Angeles, CA"],)
    returned = [{"city": "nashville tn"}, "los-angeles ca"]
    assert acceptable(returned, choices, StringMatch.BFCL)
    assert not acceptable(returned, choices, StringMatch.STRICT)
