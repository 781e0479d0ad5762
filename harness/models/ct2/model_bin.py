"""Read (and, for tests, write) CTranslate2's ``model.bin`` with numpy alone.

The layout, little-endian, as ``ctranslate2/specs/model_spec.py`` serialises it (binary
versions 4 to 6 share it)::

    u32 binary_version; str spec_name; u32 spec_revision; u32 n_variables
    n_variables x (str name; u8 rank; u32 dims[rank]; u8 dtype_id; u32 n_bytes; n_bytes data)
    u32 n_aliases; n_aliases x (str alias; str target)

where ``str`` is a u16 length (counting a final NUL) then UTF-8 bytes and the NUL. dtype ids
follow CTranslate2's ``DataType`` enum: float32, int8, int16, int32, float16, bfloat16.
bfloat16 variables are widened to float32 on reading (numpy has no bfloat16).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.models.ct2.errors import CT2FormatError

SUPPORTED_BINARY_VERSIONS = (4, 5, 6)
DTYPE_NAMES = ("float32", "int8", "int16", "int32", "float16", "bfloat16")
_NUMPY_DTYPES: dict[str, np.dtype[Any]] = {
    "float32": np.dtype("<f4"),
    "int8": np.dtype("i1"),
    "int16": np.dtype("<i2"),
    "int32": np.dtype("<i4"),
    "float16": np.dtype("<f2"),
    "bfloat16": np.dtype("<u2"),
}
_MAX_RANK = 8
_MAX_VARIABLES = 1_000_000
_FIX = "Expected a CTranslate2 model.bin (binary version 4 to 6)"


@dataclass(frozen=True)
class CT2Model:
    """The variables of a ``model.bin``: arrays by name, their stored dtypes, and aliases."""

    path: Path
    binary_version: int
    spec: str
    revision: int
    variables: Mapping[str, np.ndarray]
    dtypes: Mapping[str, str]
    aliases: Mapping[str, str]

    def get(self, name: str) -> np.ndarray | None:
        """The array for ``name``, following one alias (and aliased ``_scale`` companions)."""
        if name in self.variables:
            return self.variables[name]
        target = self.aliases.get(name)
        if target is None and name.endswith("_scale"):
            base = self.aliases.get(name[: -len("_scale")])
            target = f"{base}_scale" if base is not None else None
        return self.variables.get(target) if target is not None else None


class _Cursor:
    """Bounds-checked little-endian reads over the file's bytes."""

    def __init__(self, path: Path, data: bytes) -> None:
        self.path = path
        self.data = data
        self.offset = 0

    def take(self, size: int, what: str) -> int:
        start = self.offset
        if size < 0 or start + size > len(self.data):
            raise CT2FormatError(
                self.path,
                f"truncated: {what} needs {size} bytes at offset {start}, "
                f"the file has {len(self.data)} bytes",
                "Fetch the file again",
            )
        self.offset = start + size
        return start

    def unpack(self, fmt: str, what: str) -> int:
        start = self.take(struct.calcsize(fmt), what)
        return int(struct.unpack_from(fmt, self.data, start)[0])

    def string(self, what: str) -> str:
        size = self.unpack("<H", what)
        start = self.take(size, what)
        raw = self.data[start : start + size]
        if size == 0 or raw[-1] != 0:
            raise CT2FormatError(self.path, f"{what} at offset {start} is not NUL-terminated", _FIX)
        try:
            return raw[:-1].decode("utf-8")
        except UnicodeDecodeError:
            raise CT2FormatError(
                self.path, f"{what} at offset {start} is not UTF-8", _FIX
            ) from None


def read_model_bin(path: Path) -> CT2Model:
    """Parse ``path``; every problem (wrong magic, truncation, bad sizes) is a CT2FormatError."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CT2FormatError(path, f"cannot read: {exc.strerror or exc}") from None
    cur = _Cursor(path, data)
    version = cur.unpack("<I", "binary version")
    if version not in SUPPORTED_BINARY_VERSIONS:
        head = data[:8].hex(" ")
        raise CT2FormatError(
            path,
            f"not a CTranslate2 model.bin (binary version {version}, first bytes {head})",
            _FIX,
        )
    spec = cur.string("spec name")
    revision = cur.unpack("<I", "spec revision")
    count = cur.unpack("<I", "variable count")
    if count > _MAX_VARIABLES:
        raise CT2FormatError(path, f"implausible variable count {count}", _FIX)
    variables: dict[str, np.ndarray] = {}
    dtypes: dict[str, str] = {}
    for index in range(count):
        name = cur.string(f"name of variable {index}")
        variables[name], dtypes[name] = _read_variable(cur, name)
    aliases: dict[str, str] = {}
    for index in range(cur.unpack("<I", "alias count")):
        alias = cur.string(f"alias {index}")
        aliases[alias] = cur.string(f"target of alias {alias!r}")
    if cur.offset != len(data):
        raise CT2FormatError(path, f"{len(data) - cur.offset} unexpected bytes after the aliases")
    return CT2Model(path, version, spec, revision, variables, dtypes, aliases)


def _read_variable(cur: _Cursor, name: str) -> tuple[np.ndarray, str]:
    rank = cur.unpack("<B", f"rank of {name!r}")
    if rank > _MAX_RANK:
        raise CT2FormatError(cur.path, f"variable {name!r} has implausible rank {rank}", _FIX)
    shape = tuple(cur.unpack("<I", f"shape of {name!r}") for _ in range(rank))
    type_id = cur.unpack("<B", f"dtype of {name!r}")
    if type_id >= len(DTYPE_NAMES):
        raise CT2FormatError(cur.path, f"variable {name!r} has unknown dtype id {type_id}", _FIX)
    dtype_name = DTYPE_NAMES[type_id]
    dtype = _NUMPY_DTYPES[dtype_name]
    n_bytes = cur.unpack("<I", f"size of {name!r}")
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if n_bytes != expected:
        raise CT2FormatError(
            cur.path,
            f"variable {name!r} {dtype_name}{list(shape)} stores {n_bytes} bytes, "
            f"expected {expected}",
            _FIX,
        )
    start = cur.take(n_bytes, f"data of {name!r}")
    array = np.frombuffer(cur.data, dtype=dtype, count=n_bytes // dtype.itemsize, offset=start)
    array = array.reshape(shape)
    if dtype_name == "bfloat16":
        array = (array.astype(np.uint32) << 16).view(np.float32)
    return array, dtype_name


def write_model_bin(
    path: Path,
    variables: Mapping[str, np.ndarray],
    *,
    spec: str = "WhisperSpec",
    revision: int = 3,
    aliases: Mapping[str, str] | None = None,
    binary_version: int = 6,
) -> None:
    """Serialise ``variables`` (numpy arrays; sorted by name, as CTranslate2 does) to ``path``.

    For tests and tiny fixtures; float64 is stored as float32 and bool as int8.
    """
    parts: list[bytes] = [struct.pack("<I", binary_version), _pack_string(spec)]
    parts.append(struct.pack("<II", revision, len(variables)))
    for name in sorted(variables):
        array = np.asarray(variables[name])
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        elif array.dtype == np.bool_:
            array = array.astype(np.int8)
        names = [k for k, v in _NUMPY_DTYPES.items() if v == array.dtype.newbyteorder("<")]
        if not names:
            raise ValueError(f"{name}: dtype {array.dtype} has no CTranslate2 equivalent")
        dtype_name = names[0]  # uint16 arrays are written as raw bfloat16
        raw = np.ascontiguousarray(array, dtype=_NUMPY_DTYPES[dtype_name]).tobytes()
        parts.append(_pack_string(name))
        parts.append(struct.pack(f"<B{array.ndim}I", array.ndim, *array.shape))
        parts.append(struct.pack("<BI", DTYPE_NAMES.index(dtype_name), len(raw)))
        parts.append(raw)
    parts.append(struct.pack("<I", len(aliases or {})))
    for alias, target in sorted((aliases or {}).items()):
        parts += [_pack_string(alias), _pack_string(target)]
    Path(path).write_bytes(b"".join(parts))


def _pack_string(text: str) -> bytes:
    raw = text.encode("utf-8") + b"\0"
    return struct.pack("<H", len(raw)) + raw
