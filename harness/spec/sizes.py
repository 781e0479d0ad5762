"""Byte sizes written by people: ``1 GB`` (10^9 B), ``500MiB`` (2^20 B units), ``123`` (bytes).

Decimal units (kB, MB, GB, TB) are powers of 1000 and binary units (KiB, MiB, GiB, TiB) powers
of 1024, as on a disk label and in ``ls -h`` respectively; units are case-insensitive.
"""

from __future__ import annotations

import difflib
import re

UNITS = {
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
SPELLED = ("B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB")
PATTERN = r"^\s*\d+(\.\d+)?\s*([A-Za-z]+)?\s*$"
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


class SizeError(ValueError):
    """A size that cannot be read, with the one-line fix."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def parse_size(value: object) -> int:
    """Bytes in ``value``: a non-negative whole number of bytes, or text such as ``1.5 GiB``."""
    if isinstance(value, bool):
        raise SizeError(f"{value!r} is not a size", "write a size such as 1 GB or 500 MiB")
    if isinstance(value, int):
        if value < 0:
            raise SizeError(f"size {value} is negative", "write a size such as 1 GB or 500 MiB")
        return value
    if not isinstance(value, str):
        raise SizeError(f"{value!r} is not a size", "write a size such as 1 GB or 500 MiB")
    match = _SIZE.match(value)
    if match is None:
        raise SizeError(f"'{value}' is not a size", "write a number and a unit, e.g. 1 GB")
    number, unit = match.group(1), match.group(2) or "b"
    factor = UNITS.get(unit.lower())
    if factor is None:
        close = difflib.get_close_matches(unit, SPELLED, n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close else "units: " + ", ".join(SPELLED)
        raise SizeError(f"unknown size unit '{unit}' in '{value}'", hint)
    return int(float(number) * factor)


def format_size(n_bytes: int) -> str:
    """Short decimal form for messages: ``1.07 GB``, ``94.3 MB``, ``512 B``."""
    for unit, factor in (("TB", 1000**4), ("GB", 1000**3), ("MB", 1000**2), ("kB", 1000)):
        if n_bytes >= factor:
            return f"{n_bytes / factor:.3g} {unit}"
    return f"{n_bytes} B"
