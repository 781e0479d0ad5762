"""A request trace, read from a file: when each request arrives, how long its prompt and answer
are, which prompt blocks it shares with others, and which conversation (session) it belongs to.

Three shapes are read, told apart by their fields (or by ``format:``):
- **harness** (JSON Lines): ``{"arrival_s": 0.5, "input_tokens": 96, "output_tokens": 16}``, with
  optional ``"prefix_group": "sys-a", "prefix_tokens": 64`` (requests of a group share their
  first ``prefix_tokens`` tokens) and ``"session": "s1"`` (the turns of one conversation, in
  arrival order: each turn's prompt holds the turns before it and their answers);
- **mooncake** (JSON Lines, Mooncake's published traces): ``{"timestamp": 27482 (ms),
  "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ...]}``, each hash id a
  prompt block of ``block_tokens`` tokens (512 in Mooncake): two requests share the blocks they
  have in common from the start;
- **burstgpt** (CSV, BurstGPT's release): ``Timestamp`` (s), ``Request tokens``,
  ``Response tokens``; rows with a ``Response tokens`` of 0 (failed in the log) are left out.

A line that cannot be read stops the reading with one line naming the file, the line and the
fix (:class:`TraceError`); nothing is replayed from a trace that is partly wrong.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any


class TraceFormat(str, Enum):
    HARNESS = "harness"
    MOONCAKE = "mooncake"
    BURSTGPT = "burstgpt"


class TraceError(ValueError):
    """A trace that cannot be replayed: one line, naming the file, the line and the fix."""


@dataclass(frozen=True)
class TraceRequest:
    """One request of a trace. ``blocks``: the prompt blocks it starts with, each an id and its
    length in tokens, shared with every request that starts with the same blocks; the rest of
    the prompt is its own. ``session``: its conversation, or None."""

    arrival_s: float
    input_tokens: int
    output_tokens: int
    blocks: tuple[tuple[str, int], ...] = ()
    session: str | None = None


@dataclass(frozen=True)
class Trace:
    source: str
    format: TraceFormat
    requests: tuple[TraceRequest, ...]  # in arrival order, the first arriving at 0 s
    block_tokens: int

    @property
    def span_s(self) -> float:
        return self.requests[-1].arrival_s if self.requests else 0.0

    @property
    def sessions(self) -> int:
        return len({r.session for r in self.requests if r.session is not None})


def _where(path: Path, line: int) -> str:
    return f"{path}:{line}"


def _number(
    row: Mapping[str, Any], key: str, where: str, *, integer: bool, minimum: float
) -> float:
    raw = row.get(key)
    value: float | None = None
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        value = float(raw)
    elif isinstance(raw, str):  # CSV cells
        try:
            value = float(raw)
        except ValueError:
            value = None
    if value is None or not math.isfinite(value) or value < minimum:
        kind = "an integer" if integer else "a number"
        raise TraceError(f"{where}: '{key}' is {raw!r}; give {kind} of at least {minimum:g}")
    if integer and value != int(value):
        raise TraceError(f"{where}: '{key}' is {raw!r}; give a whole number of tokens")
    return value


def _harness(row: Mapping[str, Any], where: str) -> TraceRequest:
    prefix = row.get("prefix_group")
    blocks: tuple[tuple[str, int], ...] = ()
    if prefix is not None:
        tokens = int(_number(row, "prefix_tokens", where, integer=True, minimum=1))
        blocks = ((f"group {prefix}", tokens),)
    session = row.get("session")
    return TraceRequest(
        _number(row, "arrival_s", where, integer=False, minimum=0),
        int(_number(row, "input_tokens", where, integer=True, minimum=1)),
        int(_number(row, "output_tokens", where, integer=True, minimum=1)),
        blocks,
        None if session is None else str(session),
    )


def _mooncake(row: Mapping[str, Any], where: str, block_tokens: int) -> TraceRequest:
    ids = row.get("hash_ids", [])
    if not isinstance(ids, list):
        raise TraceError(f"{where}: 'hash_ids' is {ids!r}; give a list of block ids")
    return TraceRequest(
        _number(row, "timestamp", where, integer=False, minimum=0) / 1000.0,
        int(_number(row, "input_length", where, integer=True, minimum=1)),
        int(_number(row, "output_length", where, integer=True, minimum=1)),
        tuple((f"hash {i}", block_tokens) for i in ids),
    )


def _burstgpt(row: Mapping[str, Any], where: str) -> TraceRequest | None:
    if _number(row, "Response tokens", where, integer=True, minimum=0) == 0:
        return None  # a failed request in the log: nothing was generated
    return TraceRequest(
        _number(row, "Timestamp", where, integer=False, minimum=0),
        int(_number(row, "Request tokens", where, integer=True, minimum=1)),
        int(_number(row, "Response tokens", where, integer=True, minimum=1)),
    )


def _shape(row: Mapping[str, Any]) -> TraceFormat | None:
    if "arrival_s" in row:
        return TraceFormat.HARNESS
    if "timestamp" in row and "input_length" in row:
        return TraceFormat.MOONCAKE
    if "Timestamp" in row and "Request tokens" in row:
        return TraceFormat.BURSTGPT
    return None


def _rows(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    text = path.read_text(encoding="utf-8")
    first = next((line for line in text.splitlines() if line.strip()), "")
    if first.lstrip().startswith(("{", "[")):
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise TraceError(
                    f"{_where(path, number)}: not JSON ({exc.msg}); write one JSON object a line"
                ) from None
            if not isinstance(row, dict):
                raise TraceError(f"{_where(path, number)}: a line must be one JSON object")
            yield number, row
        return
    for number, row in enumerate(csv.DictReader(text.splitlines()), 2):
        yield number, row


def read_trace(path: Path, block_tokens: int = 512) -> Trace:
    """The trace in ``path`` (any of the three shapes), its arrivals shifted to start at 0 s and
    put in order."""
    if not path.is_file():
        raise TraceError(f"{path}: no such trace file; give the path of a .jsonl or .csv trace")
    try:
        rows = list(_rows(path))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TraceError(
            f"{path}: cannot be read ({exc}); give a JSON Lines or CSV trace"
        ) from None
    if not rows:
        raise TraceError(f"{path}: the trace holds no request; give one request a line")
    shape = _shape(rows[0][1])
    if shape is None:
        keys = ", ".join(sorted(map(str, rows[0][1])))[:120]
        raise TraceError(
            f"{_where(path, rows[0][0])}: a request of no known shape (fields: {keys}); give "
            "arrival_s/input_tokens/output_tokens, Mooncake's timestamp/input_length/"
            "output_length/hash_ids or BurstGPT's Timestamp/Request tokens/Response tokens"
        )
    requests: list[TraceRequest] = []
    for number, row in rows:
        where = _where(path, number)
        if _shape(row) is not shape:
            raise TraceError(f"{where}: this line's fields are not those of a {shape.value} trace")
        if shape is TraceFormat.HARNESS:
            requests.append(_harness(row, where))
        elif shape is TraceFormat.MOONCAKE:
            requests.append(_mooncake(row, where, block_tokens))
        elif (found := _burstgpt(row, where)) is not None:
            requests.append(found)
    requests.sort(key=lambda r: r.arrival_s)
    start = requests[0].arrival_s if requests else 0.0
    shifted = tuple(
        TraceRequest(r.arrival_s - start, r.input_tokens, r.output_tokens, r.blocks, r.session)
        for r in requests
    )
    return Trace(str(path), shape, shifted, block_tokens)
