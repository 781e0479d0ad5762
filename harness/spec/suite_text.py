"""A suite file's bytes to text: size limit, encoding and characters checked before YAML.

Each refusal is one :class:`~harness.spec.errors.SuiteError` naming the position of the first
bad byte and the fix, so binary files, UTF-16, Latin-1 and control characters never reach the
YAML parser (whose own messages for them are cryptic).
"""

from __future__ import annotations

import codecs
import re
import stat
from pathlib import Path

from harness.spec.errors import SuiteError

MAX_BYTES = 1 << 20  # 1 MiB; the shipped suites are a few KiB

_SAVE_AS_UTF8 = "save the file as UTF-8 text"
# byte-order marks of encodings that are not UTF-8, longest first (UTF-32 LE starts like UTF-16 LE)
_OTHER_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)
# what YAML accepts in a stream (YAML 1.1 c-printable, as PyYAML's reader); the rest is refused
_NOT_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words ("a directory", "a socket"...)."""
    return next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")


def read_suite_text(path: Path) -> tuple[str | None, SuiteError | None]:
    """The text of ``path``, or the one error that says why it cannot be a suite file."""
    where = str(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            kind = file_kind(info.st_mode)
            return None, SuiteError(where, 1, 1, f"not a file ({kind})", "give a YAML file")
        raw = b""
        if info.st_size <= MAX_BYTES:
            with path.open("rb") as handle:
                raw = handle.read(MAX_BYTES + 1)  # it may have grown since
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return None, SuiteError(where, 1, 1, f"cannot read file ({reason})", "check the path")
    size = max(info.st_size, len(raw))
    if size > MAX_BYTES:
        return None, SuiteError(
            where,
            1,
            1,
            f"the file is {size / (1 << 20):.1f} MiB ({size} bytes); suite files are limited "
            f"to {MAX_BYTES >> 20} MiB",
            "split it, or move data into files the scenarios read",
        )
    return decode(raw, where)


def decode(raw: bytes, where: str) -> tuple[str | None, SuiteError | None]:
    """UTF-8 text (a UTF-8 byte-order mark is dropped), or the error at the first bad byte."""
    for bom, encoding in _OTHER_BOMS:
        if raw.startswith(bom):
            return None, SuiteError(
                where,
                1,
                1,
                f"the file is {encoding} text (it starts with a byte-order mark)",
                _SAVE_AS_UTF8,
            )
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    nul = raw.find(b"\x00")
    if nul >= 0:
        line, column = _byte_position(raw, nul)
        zeros = max(raw[0::2].count(0), raw[1::2].count(0))
        looks = "UTF-16 text" if zeros > len(raw) // 4 else "a binary file"
        return None, SuiteError(
            where, line, column, f"a NUL byte: this looks like {looks}", _SAVE_AS_UTF8
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _byte_position(raw, exc.start)
        return None, SuiteError(
            where,
            line,
            column,
            f"byte 0x{raw[exc.start]:02X} is not UTF-8 (Latin-1 or another encoding?)",
            _SAVE_AS_UTF8,
        )
    bad = _NOT_PRINTABLE.search(text)
    if bad is not None:
        start = bad.start()
        line = text.count("\n", 0, start) + 1
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        return None, SuiteError(
            where,
            line,
            column,
            f"control character {ascii(bad.group())[1:-1]} (YAML allows only printable text)",
            "remove it",
        )
    return text, None


def _byte_position(raw: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of byte ``offset``."""
    line_start = raw.rfind(b"\n", 0, offset) + 1
    column = len(raw[line_start:offset].decode("utf-8", errors="replace")) + 1
    return raw.count(b"\n", 0, offset) + 1, column
