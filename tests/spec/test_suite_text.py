"""A suite file's bytes to text: the first bad byte's position is in characters, 1-based."""

from __future__ import annotations

import codecs

import pytest

from harness.spec.suite_text import decode

# (name, bytes, line:column of the refusal or None, fragment)
CASES = [
    ("plain", b"a: 1\n", None, ""),
    ("utf8_bom_dropped", codecs.BOM_UTF8 + b"a: 1\n", None, ""),
    ("crlf", b"a: 1\r\nb: 2\r\n", None, ""),
    ("latin1_after_multibyte", "a: ü".encode() + b"\xe9\n", "1:5", "byte 0xE9"),
    ("latin1_second_line", b"a: 1\nb: caf\xe9\n", "2:7", "not UTF-8"),
    ("nul", b"a: 1\nb: \x00\n", "2:4", "NUL byte"),
    ("utf16_be", "a: 1\n".encode("utf-16-be"), "1:1", "UTF-16"),
    ("utf16_le_bom", codecs.BOM_UTF16_LE + "a".encode("utf-16-le"), "1:1", "UTF-16 text"),
    ("utf32_le_bom", codecs.BOM_UTF32_LE + "a".encode("utf-32-le"), "1:1", "UTF-32 text"),
    ("escape", "a: é\x1b[2J\n".encode(), "1:5", "control character \\x1b"),
    ("del", b"a: \x7f\n", "1:4", "control character \\x7f"),
    ("c1_control", "a: \x9b\n".encode(), "1:4", "control character \\x9b"),
]


@pytest.mark.parametrize(
    ("data", "where", "fragment"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_decode(data: bytes, where: str | None, fragment: str) -> None:
    text, error = decode(data, "f.suite.yaml")
    if where is None:
        assert error is None and text is not None and not text.startswith("\ufeff")
        return
    assert text is None and error is not None
    assert f"{error.line}:{error.column}" == where
    assert fragment in error.message
    assert error.hint
