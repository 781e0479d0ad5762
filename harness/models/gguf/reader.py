"""Parse a GGUF file's header (metadata and tensor directory) without loading tensor data.

The parser is self-contained (struct + numpy): it is fast enough to probe a 250 MB model with a
262k-token vocabulary in well under a second, and it turns every malformed input into a
:class:`GGUFImportError` with a one-line message.
"""

from __future__ import annotations

import math
import mmap
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from harness.models.gguf.errors import GGUFImportError
from harness.models.gguf.ggml import ggml_type

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
SHORT_ARRAY = 64  # read_gguf_header keeps arrays up to this length, and only counts longer ones

_STRING, _ARRAY = 8, 9
_SCALARS: Mapping[int, str] = MappingProxyType(
    {
        0: "<B",
        1: "<b",
        2: "<H",
        3: "<h",
        4: "<I",
        5: "<i",
        6: "<f",
        7: "<?",
        10: "<Q",
        11: "<q",
        12: "<d",
    }
)
_NUMPY: Mapping[int, str] = MappingProxyType(
    {
        0: "<u1",
        1: "<i1",
        2: "<u2",
        3: "<i2",
        4: "<u4",
        5: "<i4",
        6: "<f4",
        7: "|b1",
        10: "<u8",
        11: "<i8",
        12: "<f8",
    }
)


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of the directory. ``shape`` is numpy order (GGUF dims reversed)."""

    name: str
    shape: tuple[int, ...]
    type_id: int
    type_name: str
    offset: int  # absolute offset of the data in the file
    nbytes: int  # -1 when the type is unknown to this reader

    @property
    def n_elements(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class GGUFFile:
    """A parsed GGUF header: all metadata (arrays as tuples / numpy arrays) and the tensors."""

    path: Path
    version: int
    metadata: Mapping[str, Any]
    tensors: tuple[TensorInfo, ...]
    file_size: int

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))

    def tensor(self, name: str) -> TensorInfo | None:
        return next((t for t in self.tensors if t.name == name), None)


@dataclass(frozen=True)
class GGUFHeader:
    """What model probing needs: architecture, key metadata, long arrays only counted."""

    path: Path
    version: int
    architecture: str
    name: str
    tensor_count: int
    file_size: int
    tensor_types: Mapping[str, int]  # GGML type name -> number of tensors
    metadata: Mapping[str, Any]  # scalars and arrays of at most SHORT_ARRAY items
    array_lengths: Mapping[str, int]  # longer arrays (e.g. tokenizer.ggml.tokens) -> length

    def get(self, key: str, default: Any = None) -> Any:
        """Metadata value, trying ``<architecture>.<key>`` first (e.g. ``get("block_count")``)."""
        return self.metadata.get(f"{self.architecture}.{key}", self.metadata.get(key, default))


class _Truncated(Exception):
    pass


class _Cursor:
    """Bounds-checked little-endian reads over a buffer."""

    def __init__(self, buf: mmap.mmap | bytes) -> None:
        self.buf = buf
        self.pos = 0
        self.size = len(buf)

    def take(self, n: int) -> int:
        start = self.pos
        if n < 0 or start + n > self.size:
            raise _Truncated
        self.pos = start + n
        return start

    def scalar(self, fmt: str) -> Any:
        return struct.unpack_from(fmt, self.buf, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        n = self.scalar("<Q")
        start = self.take(n)
        return bytes(self.buf[start : start + n]).decode("utf-8", errors="replace")

    def value(self, vtype: int, keep_arrays: int | None) -> tuple[Any, int | None]:
        """Read one value; returns (value, array length). Long arrays are skipped when
        ``keep_arrays`` is set (value None)."""
        if vtype == _STRING:
            return self.string(), None
        if vtype in _SCALARS:
            return self.scalar(_SCALARS[vtype]), None
        if vtype != _ARRAY:
            raise ValueError(f"unknown metadata value type {vtype}")
        itype, count = self.scalar("<I"), self.scalar("<Q")
        keep = keep_arrays is None or count <= keep_arrays
        if itype == _STRING:
            if keep:
                return tuple(self.string() for _ in range(count)), count
            for _ in range(count):
                self.take(self.scalar("<Q"))
            return None, count
        if itype in _NUMPY:
            import numpy as np  # only once an array is read: probing a header needs none

            dtype = np.dtype(_NUMPY[itype])
            start = self.take(dtype.itemsize * count)
            if not keep:
                return None, count
            array = np.frombuffer(self.buf, dtype=dtype, count=count, offset=start).copy()
            array.flags.writeable = False
            return array, count
        if itype == _ARRAY:
            return tuple(self.value(_ARRAY, keep_arrays)[0] for _ in range(count)), count
        raise ValueError(f"unknown metadata array item type {itype}")


def _parse(path: Path, keep_arrays: int | None) -> tuple[GGUFFile, dict[str, int]]:
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            if size < 4 or handle.read(4) != GGUF_MAGIC:
                raise GGUFImportError(
                    path,
                    "not a GGUF file (the first 4 bytes are not 'GGUF')",
                    "Pass a .gguf model file; if it is split in parts, join them in order first.",
                )
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                return _parse_buffer(path, buf, size, keep_arrays)
    except _Truncated:
        raise GGUFImportError(
            path,
            f"truncated GGUF file (header ends early; file is {size} bytes)",
            "Download it again or re-join all of its parts.",
        ) from None
    except (ValueError, struct.error, OverflowError, MemoryError) as exc:
        raise GGUFImportError(path, f"corrupt GGUF header ({exc})", "Re-create the file.") from None
    except OSError as exc:
        raise GGUFImportError(
            path, f"cannot read file ({exc.strerror or exc})", "Check the path and its permissions."
        ) from None


def _parse_buffer(
    path: Path, buf: mmap.mmap, size: int, keep_arrays: int | None
) -> tuple[GGUFFile, dict[str, int]]:
    cur = _Cursor(buf)
    cur.take(4)
    version = cur.scalar("<I")
    if version not in (2, 3):
        raise GGUFImportError(
            path,
            f"unsupported GGUF version {version} (expected 2 or 3)",
            "Re-export the model with a current llama.cpp.",
        )
    n_tensors, n_kv = cur.scalar("<Q"), cur.scalar("<Q")
    if n_tensors > size or n_kv > size:
        raise _Truncated
    metadata: dict[str, Any] = {}
    lengths: dict[str, int] = {}
    for _ in range(n_kv):
        key = cur.string()
        value, length = cur.value(cur.scalar("<I"), keep_arrays)
        if value is not None:
            metadata[key] = value
        if length is not None and value is None:
            lengths[key] = length
    raw: list[tuple[str, tuple[int, ...], int, int]] = []
    for _ in range(n_tensors):
        name = cur.string()
        n_dims = cur.scalar("<I")
        if n_dims > 8:
            raise ValueError(f"tensor {name!r} has {n_dims} dimensions")
        dims = tuple(cur.scalar("<Q") for _ in range(n_dims))
        raw.append((name, tuple(reversed(dims)), cur.scalar("<I"), cur.scalar("<Q")))
    alignment = int(metadata.get("general.alignment", DEFAULT_ALIGNMENT)) or DEFAULT_ALIGNMENT
    data_offset = -(-cur.pos // alignment) * alignment
    tensors = tuple(
        _tensor_info(name, shape, tid, data_offset + off) for name, shape, tid, off in raw
    )
    for t in tensors:
        if t.nbytes >= 0 and t.offset + t.nbytes > size:
            raise GGUFImportError(
                path,
                f"truncated GGUF file: tensor {t.name!r} needs bytes up to "
                f"{t.offset + t.nbytes} but the file has {size}",
                "Download it again or re-join all of its parts.",
            )
    ro_meta = MappingProxyType(metadata)
    return GGUFFile(path, version, ro_meta, tensors, size), lengths


def _tensor_info(name: str, shape: tuple[int, ...], type_id: int, offset: int) -> TensorInfo:
    kind = ggml_type(type_id)
    if kind is None:
        return TensorInfo(name, shape, type_id, f"type#{type_id}", offset, -1)
    n = math.prod(shape)
    if shape and shape[-1] % kind.block_size:
        raise ValueError(
            f"tensor {name!r} row length {shape[-1]} is not a multiple of "
            f"the {kind.name} block size {kind.block_size}"
        )
    nbytes = n // kind.block_size * kind.type_size
    return TensorInfo(name, shape, type_id, kind.name, offset, nbytes)


def read_gguf(path: Path | str) -> GGUFFile:
    """Parse the whole header of a GGUF file, with every metadata array in full."""
    return _parse(Path(path), keep_arrays=None)[0]


def read_gguf_directory(path: Path | str) -> GGUFFile:
    """Metadata and the full tensor directory, with long metadata arrays (the vocabulary)
    skipped: what probing a file's weights needs, without decoding every token string."""
    return _parse(Path(path), keep_arrays=SHORT_ARRAY)[0]


def read_gguf_header(path: Path | str) -> GGUFHeader:
    """Read only what probing needs: architecture, scalar metadata, long arrays counted."""
    parsed, lengths = _parse(Path(path), keep_arrays=SHORT_ARRAY)
    counts: dict[str, int] = {}
    for t in parsed.tensors:
        counts[t.type_name] = counts.get(t.type_name, 0) + 1
    return GGUFHeader(
        path=parsed.path,
        version=parsed.version,
        architecture=parsed.architecture,
        name=str(parsed.metadata.get("general.name", "")),
        tensor_count=len(parsed.tensors),
        file_size=parsed.file_size,
        tensor_types=MappingProxyType(counts),
        metadata=parsed.metadata,
        array_lengths=MappingProxyType(lengths),
    )


def tensor_bytes(gguf: GGUFFile, info: TensorInfo) -> np.ndarray:
    """The raw bytes of one tensor as a read-only uint8 array, rows = numpy shape[:-1]."""
    if info.nbytes < 0:
        raise GGUFImportError(
            gguf.path,
            f"tensor {info.name!r} has unknown type {info.type_name}",
            "This file needs a newer importer.",
        )
    import numpy as np

    data = np.memmap(gguf.path, dtype=np.uint8, mode="r", offset=info.offset, shape=(info.nbytes,))
    rows = math.prod(info.shape[:-1]) if len(info.shape) > 1 else 1
    return data.reshape(rows, info.nbytes // rows) if rows else data.reshape(0, 0)
