"""Sizes people write: decimal and binary units, bytes, and one-line errors with the fix."""

from __future__ import annotations

import pytest

from harness.spec.sizes import SizeError, format_size, parse_size

GOOD = [
    ("1 GB", 10**9),
    ("1GB", 10**9),
    ("1 gb", 10**9),
    ("500MiB", 500 * 2**20),
    ("1.5 GiB", 3 * 2**29),
    ("2 kB", 2000),
    ("1 TiB", 2**40),
    ("123", 123),
    ("64 B", 64),
    (4096, 4096),
    (0, 0),
]

BAD = [
    ("1 GBs", "unknown size unit 'GBs'", "did you mean 'GB'?"),
    ("1 gigs", "unknown size unit 'gigs'", "units: B, kB, MB"),
    ("big", "'big' is not a size", "e.g. 1 GB"),
    ("-1 GB", "is not a size", "e.g. 1 GB"),
    (-5, "negative", "1 GB"),
    (True, "is not a size", "1 GB"),
    (1.5, "is not a size", "1 GB"),
]


@pytest.mark.parametrize(("text", "expected"), GOOD, ids=[str(g[0]) for g in GOOD])
def test_sizes_parse(text: object, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize(("text", "message", "hint"), BAD, ids=[str(b[0]) for b in BAD])
def test_bad_sizes_say_what_and_how(text: object, message: str, hint: str) -> None:
    with pytest.raises(SizeError) as info:
        parse_size(text)
    assert message in info.value.message
    assert hint in info.value.hint


@pytest.mark.parametrize(
    ("n", "shown"),
    [(1_072_392_704, "1.07 GB"), (98_346_240, "98.3 MB"), (427_264, "427 kB"), (12, "12 B")],
)
def test_format_size(n: int, shown: str) -> None:
    assert format_size(n) == shown
