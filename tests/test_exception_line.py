"""An exception as one line: the form every one-line reason of the harness takes."""

from __future__ import annotations

import pytest

from harness.core.exception_line import exception_line

CASES = [
    (ValueError("bad\nsecond line"), None, "ValueError: bad"),
    (ValueError("\n\n  first after blanks  \nmore"), None, "ValueError: first after blanks"),
    (KeyError("x"), None, "KeyError: 'x'"),
    (RuntimeError(""), None, "RuntimeError"),
    (RuntimeError("   "), None, "RuntimeError"),
    (OSError("a" * 300), 10, "OSError: aaaaaaaaa…"),
]


@pytest.mark.parametrize(("exc", "limit", "expected"), CASES)
def test_exception_line(exc: BaseException, limit: int | None, expected: str) -> None:
    assert exception_line(exc, limit) == expected
