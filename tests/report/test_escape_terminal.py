"""``visible``: text for a terminal with every acting character shown, not obeyed."""

from __future__ import annotations

import pytest

from harness.report.escape import plain, visible


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain text", "plain text"),
        ("naïve café 東京 🙂", "naïve café 東京 🙂"),  # printable Unicode stays as it is
        ("\x1b[2J\x1b]0;pwned\x07", "\\x1b[2J\\x1b]0;pwned\\x07"),  # clear screen, set title
        ("\x9b31m", "\\x9b31m"),  # the one-byte CSI of 8-bit terminals
        ("a\x00b\x7fc", "a\\x00b\\x7fc"),
        ("line\nbreak\r\ttab", "line\\x0abreak\\x0d\\x09tab"),
        ("abc\u202edcba", "abc\\u202edcba"),  # right-to-left override
        ("\u2066x\u2069 \u2067y\u2068", "\\u2066x\\u2069 \\u2067y\\u2068"),  # isolates
        ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),  # marks
        ("\u202a\u202b\u202c\u202d", "\\u202a\\u202b\\u202c\\u202d"),  # embeddings, pop
        ("para\u2028graph\u2029", "para\\u2028graph\\u2029"),
        ("C:\\path\\x1b", "C:\\path\\x1b"),  # backslashes already there are kept
    ],
)
def test_visible(text: str, expected: str) -> None:
    assert visible(text) == expected
    assert visible(text).isprintable()


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("abcdef", 4, "abc…"),
        ("abc", 4, "abc"),
        ("\x1b[2J", 6, "\\x1b[…"),  # cut after escaping: the cut is counted on what is shown
        ("abc", 0, "…"),
    ],
)
def test_visible_limit(text: str, limit: int, expected: str) -> None:
    assert visible(text, limit) == expected


def test_plain_folds_line_breaks_and_shows_the_rest() -> None:
    """``plain`` (the run summary) folds line breaks and whitespace, and escapes the rest."""
    assert plain("\x1b[31mred\x1b[0m\r\nnext\t\u202e", 40) == "\\x1b[31mred\\x1b[0m next \\u202e"
