"""Small readers: JSON files that may be missing or broken, and safetensors headers.

A safetensors file is an 8-byte little-endian header length, a JSON header naming each tensor's
dtype, shape and byte range, then the data. Only the first two are read here.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_HEADER_BYTES = 100 * 1024 * 1024  # the safetensors format's own limit

DTYPE_BYTES: dict[str, float] = {
    "F64": 8,
    "I64": 8,
    "U64": 8,
    "F32": 4,
    "I32": 4,
    "U32": 4,
    "F16": 2,
    "BF16": 2,
    "I16": 2,
    "U16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "F4": 0.5,
}


class ProbeFileError(Exception):
    """A file exists but cannot be used; the message is one line naming the file."""


def load_json(path: Path) -> Any:
    """The parsed content of a JSON file; None when it does not exist.

    Raises :class:`ProbeFileError` (one line) when it exists but cannot be read or parsed.
    """
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProbeFileError(f"{path.name}: cannot read ({_reason(exc)})") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ProbeFileError(f"{path.name}: invalid JSON ({exc})") from None


def _reason(exc: Exception) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


@dataclass(frozen=True)
class TensorHeader:
    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    file: str = ""  # the file declaring it, relative to the model directory

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


def safetensors_header(path: Path) -> tuple[TensorHeader, ...]:
    """The tensors a safetensors file declares, checked against its size (truncation)."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(8)
            if len(head) < 8:
                raise ProbeFileError(f"{path.name}: truncated safetensors file ({size} bytes)")
            (length,) = struct.unpack("<Q", head)
            if length > MAX_HEADER_BYTES or length + 8 > size:
                raise ProbeFileError(
                    f"{path.name}: not a safetensors file (header length {length}, "
                    f"file {size} bytes)"
                )
            raw = handle.read(length)
    except OSError as exc:
        raise ProbeFileError(f"{path.name}: cannot read ({_reason(exc)})") from None
    try:
        header = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProbeFileError(f"{path.name}: corrupt safetensors header ({exc})") from None
    if not isinstance(header, dict):
        raise ProbeFileError(f"{path.name}: corrupt safetensors header (not an object)")
    tensors = []
    end_max = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        tensors.append(_tensor(path, name, info))
        end_max = max(end_max, int(info["data_offsets"][1]))
    if 8 + length + end_max > size:
        raise ProbeFileError(
            f"{path.name}: truncated (tensors need {8 + length + end_max} bytes, file has {size})"
        )
    return tuple(tensors)


def _tensor(path: Path, name: str, info: Any) -> TensorHeader:
    try:
        dtype = str(info["dtype"])
        shape = tuple(int(d) for d in info["shape"])
        start, end = (int(v) for v in info["data_offsets"])
    except (KeyError, TypeError, ValueError):
        raise ProbeFileError(f"{path.name}: corrupt safetensors entry for {name!r}") from None
    nbytes = end - start
    per = DTYPE_BYTES.get(dtype)
    if nbytes < 0 or (per is not None and nbytes != math.ceil(math.prod(shape) * per)):
        raise ProbeFileError(
            f"{path.name}: tensor {name!r} has {nbytes} bytes for {dtype}{list(shape)}"
        )
    return TensorHeader(name, dtype, shape, nbytes, path.name)
