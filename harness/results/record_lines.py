"""The lines of a run record, read from any bytes without trusting them.

A record is JSON Lines written one whole line per ``os.write``, so the only damage a killed run
leaves is a cut LAST line (no newline at its end, not valid JSON or not UTF-8): it is skipped
and described in a warning. Anything else that is not a UTF-8 JSON object line is a
:class:`BadLine`, with its line number and what is wrong, for the caller to report.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.results.codec import DecodeError, parse_line

BOM = b"\xef\xbb\xbf"
_JSON_NAMES: Mapping[type, str] = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


class BadLine(ValueError):
    """A line that cannot be an event: ``number`` (1-based) and ``what`` (one line)."""

    def __init__(self, number: int, what: str) -> None:
        super().__init__(what)
        self.number = number
        self.what = what


@dataclass(frozen=True)
class RecordLine:
    number: int  # 1-based, as an editor shows it
    text: str
    value: dict[str, Any]  # the JSON object on the line


@dataclass(frozen=True)
class RecordLines:
    lines: tuple[RecordLine, ...]
    torn: str | None = None  # ``N: what``, when a cut last line was skipped


def _raw_lines(path: Path) -> Iterator[bytes]:
    with path.open("rb") as fh:
        yield from fh


def _text(raw: bytes, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = raw[exc.start]
        raise BadLine(
            number, f"not UTF-8 text (byte 0x{byte:02x} at column {exc.start + 1})"
        ) from None


def _object(text: str, number: int) -> dict[str, Any]:
    try:
        value = parse_line(text)
    except DecodeError as exc:
        raise BadLine(number, str(exc)) from None
    if not isinstance(value, dict):
        raise BadLine(number, f"not an event (a JSON {_JSON_NAMES[type(value)]}, not an object)")
    return value


def read_record_lines(path: Path) -> RecordLines:
    """Every non-blank line of ``path`` as a JSON object; a cut last line is skipped.

    Raises :class:`BadLine` for a line that is not a JSON object (other than a cut last line)
    and ``OSError`` when the file cannot be read.
    """
    lines: list[RecordLine] = []
    torn: str | None = None
    for number, raw in enumerate(_raw_lines(path), start=1):
        if number == 1 and raw.startswith(BOM):
            raw = raw[len(BOM) :]
        if not raw.strip():
            continue
        complete = raw.endswith(b"\n")  # only the last line of a file can lack one
        try:
            text = _text(raw, number)
            lines.append(RecordLine(number, text, _object(text, number)))
        except BadLine:
            if complete:
                raise
            torn = (
                f"{number}: last line cut off ({len(raw)} bytes, no newline: the run stopped "
                "while writing it); skipped"
            )
    return RecordLines(tuple(lines), torn)
