"""JSON encoding of the shared values (dataclasses and enums) and decoding back into them.

Run-record lines are decoded defensively: :func:`parse_line` accepts only plain JSON with
finite, bounded numbers and bounded nesting, and :func:`decode_event` checks every field of a
known event against the shared types (pydantic, strict JSON mode: no "3" for 3, no "NaN" for a
number, no string for a list). Both raise :class:`DecodeError`, a one-line ``what``.

A case's ``preflight`` record is a :class:`PreflightRecord`; a case that was not judged has
None, written ``{}`` as earlier versions wrote it (their readers take no null there) and read
back as None (:func:`preflight_from_json`).

A case's ``checks`` (each named check's verdict) is left out while empty. A line of an older
record is brought to today's format before it is decoded (:mod:`harness.results.migrations`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, NotRequired

from typing_extensions import TypedDict

from harness.core.check_types import CheckVerdict
from harness.core.preflight_types import PreflightRecord
from harness.core.types import (
    CaseResult,
    LockCheck,
    Machine,
    Metric,
    ModelIdentity,
    PinSetInfo,
    RunPart,
    Shard,
    SuiteInfo,
    Unit,
)

if TYPE_CHECKING:
    from pydantic import TypeAdapter, ValidationError

# No measurement comes near these; the bounds keep sums and squares in statistics finite.
MAX_ABS_FLOAT = 1e100
MAX_ABS_INT = 2**63 - 1


class DecodeError(ValueError):
    """A record line that is not a valid event: what is wrong, in one line (no file or line)."""


def to_json(value: Any) -> Any:
    """Turn dataclasses, enums, mappings and tuples into plain JSON values (NaN -> None, a lone
    surrogate in text -> ``?``, so strict JSON readers take every line we write)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {
            f.name: to_json(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not (f.metadata.get("omitted_when_default") and getattr(value, f.name) == f.default)
        }
        if isinstance(value, CaseResult) and value.preflight is None:
            data["preflight"] = {}  # not judged, as earlier versions wrote (and read) it
        return data
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {_unicode(str(k)): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        return _unicode(value)
    return value


def _unicode(text: str) -> str:
    """``text`` as UTF-8 can hold it: lone surrogates (undecodable bytes) become ``?``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _bounded_float(text: str) -> float:
    value = float(text)
    if not abs(value) <= MAX_ABS_FLOAT:
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def _bounded_int(text: str) -> int:
    if len(text) > 20 or abs(value := int(text)) > MAX_ABS_INT:
        raise ValueError(f"number {text[:20]}... is out of range")
    return value


def parse_line(text: str) -> Any:
    """One line of a record as JSON: no NaN/Infinity, numbers in range, nesting bounded."""
    try:
        return json.loads(
            text,
            parse_constant=_no_constant,
            parse_float=_bounded_float,
            parse_int=_bounded_int,
        )
    except RecursionError:
        raise DecodeError("not a JSON line (nested too deeply)") from None
    except ValueError as exc:  # json.JSONDecodeError included
        raise DecodeError(f"not a JSON line ({exc})") from None


class _RunStart(TypedDict):
    schema_version: int
    run_id: str
    started_at: str
    machine: Machine
    packages: NotRequired[dict[str, str | None]]
    git_sha: NotRequired[str | None]
    suites: NotRequired[list[SuiteInfo]]
    shard: NotRequired[Shard | None]  # absent in older records and in unsharded runs
    parts: NotRequired[list[RunPart]]  # a merged record's runs; absent in older records
    pin_set: NotRequired[PinSetInfo | None]  # absent in older records and plain runs
    lock: NotRequired[LockCheck | None]  # absent in older records and without a lock
    selection: NotRequired[list[str]]  # absent in older records and runs of every case


class _ModelLoaded(TypedDict):
    identity: ModelIdentity
    device: NotRequired[str | None]
    blas: NotRequired[str | None]


class _Probed(TypedDict):
    model: str
    probe: NotRequired[dict[str, Any] | None]


class _CaseDone(TypedDict):
    result: CaseResult


class _RunEnd(TypedDict):
    finished_at: NotRequired[str | None]


class _RunInterrupted(TypedDict):
    at: str
    reason: str


class _RunResume(TypedDict):
    at: str
    packages: NotRequired[dict[str, str | None]]
    git_sha: NotRequired[str | None]


EVENT_TYPES: Mapping[str, type] = {
    "run_start": _RunStart,
    "model": _ModelLoaded,
    "probe": _Probed,
    "case": _CaseDone,
    "run_end": _RunEnd,
    "run_interrupted": _RunInterrupted,
    "run_resume": _RunResume,
}


@functools.cache
def _adapter(kind: str) -> TypeAdapter[Any]:
    """The compiled validator of one event kind: built once (pydantic advises reuse), immutable."""
    from pydantic import TypeAdapter

    return TypeAdapter(EVENT_TYPES[kind])


def _where(loc: tuple[int | str, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def _first_error(exc: ValidationError) -> str:
    """``.where: what (and N more)``: the first of pydantic's errors, on one line."""
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    message = " ".join(str(first["msg"]).split())
    return f"{_where(tuple(first['loc']))}: {message}{more}"


def decode_event(kind: str, text: str) -> dict[str, Any]:
    """The fields of a ``kind`` event (a key of :data:`EVENT_TYPES`), typed, from its line."""
    from pydantic import ValidationError

    try:
        event = dict(_adapter(kind).validate_json(text, strict=True))
    except ValidationError as exc:
        raise DecodeError(f"{kind} event{_first_error(exc)}") from None
    except RecursionError:
        raise DecodeError(f"{kind} event: nested too deeply") from None
    if kind == "case":
        result: CaseResult = event["result"]
        preflight = _judged(result.preflight)
        if preflight is not result.preflight:  # else: as read
            event["result"] = dataclasses.replace(result, preflight=preflight)
    return event


def _judged(record: PreflightRecord | None) -> PreflightRecord | None:
    """None for a record of ``{}`` (read with every field at its default): not judged."""
    return None if record is None or record == PreflightRecord() else record


def preflight_from_json(data: Any) -> PreflightRecord | None:
    """The :class:`PreflightRecord` a case's ``preflight`` value holds, checked as the run
    record's lines are; None for None and ``{}``. Keys it lacks take their defaults (an older
    record), keys it does not know are ignored (a newer one)."""
    if data is None or data == {}:
        return None
    try:
        text = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise DecodeError(f"preflight: not JSON data ({exc})") from None
    from pydantic import ValidationError

    try:
        record = _preflight_adapter().validate_json(text, strict=True)
    except ValidationError as exc:
        raise DecodeError(f"preflight{_first_error(exc)}") from None
    return _judged(record)


@functools.cache
def _preflight_adapter() -> TypeAdapter[PreflightRecord]:
    from pydantic import TypeAdapter

    return TypeAdapter(PreflightRecord)


def checks_from_json(data: Any) -> tuple[CheckVerdict, ...]:
    """The :class:`CheckVerdict` list a worker's reply holds (``[]`` or absent: none),
    checked as the run record's lines are."""
    if not data:
        return ()
    try:
        text = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise DecodeError(f"checks: not JSON data ({exc})") from None
    from pydantic import ValidationError

    try:
        return _checks_adapter().validate_json(text, strict=True)
    except ValidationError as exc:
        raise DecodeError(f"checks{_first_error(exc)}") from None


@functools.cache
def _checks_adapter() -> TypeAdapter[tuple[CheckVerdict, ...]]:
    from pydantic import TypeAdapter

    return TypeAdapter(tuple[CheckVerdict, ...])


def metric_from_json(d: Mapping[str, Any]) -> Metric:
    return Metric(
        name=d["name"],
        unit=Unit(d["unit"]),
        samples=tuple(float(x) for x in d.get("samples", ())),
        warmup_samples=tuple(float(x) for x in d.get("warmup_samples", ())),
        view=d.get("view"),
    )
