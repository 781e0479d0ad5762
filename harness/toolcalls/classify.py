"""Compare what a backend returned with the expected calls, as structures, and name the failure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from harness.toolcalls.model import Extraction, ToolCall
from harness.toolcalls.schema import (
    Tools,
    json_type,
    mismatch,
    parameter_schema,
    required_parameters,
)


class CallFailure(str, Enum):
    OK = "ok"
    NOT_DETECTED = "not_detected"  # no call found where one was expected, and no parse error
    PARSE_ERROR = "parse_error"  # the parser raised: the call was dropped, or the request failed
    WRONG_NAME = "wrong_name"
    MISSING_REQUIRED = "missing_required"  # a parameter the schema requires is absent
    MISSING_ARGUMENT = "missing_argument"  # an expected argument is absent
    EXTRA_ARGUMENT = "extra_argument"
    WRONG_TYPE = "wrong_type"  # a JSON type differs from the expected one or from the schema
    WRONG_VALUE = "wrong_value"
    LEAKED_MARKUP = "leaked_markup"  # the calls are right but call markup reached the content
    DROPPED_CALL = "dropped_call"  # fewer calls than expected, and no parse error
    EXTRA_CALL = "extra_call"  # more calls than expected (a call where none was expected)


# Within one call, the most telling failure wins.
_PRIORITY = (
    CallFailure.WRONG_NAME,
    CallFailure.MISSING_REQUIRED,
    CallFailure.MISSING_ARGUMENT,
    CallFailure.EXTRA_ARGUMENT,
    CallFailure.WRONG_TYPE,
    CallFailure.WRONG_VALUE,
)


@dataclass(frozen=True)
class CallVerdict:
    failure: CallFailure
    detail: str = ""


def _kind(value: Any) -> str:
    kind = json_type(value)
    return "number" if kind == "integer" else kind


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _diff(expected: Any, got: Any, path: str) -> CallVerdict | None:
    """Structural difference: strings compare stripped, 1 equals 1.0, booleans are not numbers."""
    if _kind(expected) != _kind(got):
        return CallVerdict(
            CallFailure.WRONG_TYPE,
            f"{path}: expected {json_type(expected)}, got {json_type(got)} {_short(got)}",
        )
    if isinstance(expected, dict):
        if set(expected) != set(got):
            missing = sorted(set(expected) - set(got))
            extra = sorted(set(got) - set(expected))
            return CallVerdict(
                CallFailure.WRONG_VALUE, f"{path}: keys missing {missing}, extra {extra}"
            )
        for key, value in expected.items():
            found = _diff(value, got[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        if len(expected) != len(got):
            return CallVerdict(
                CallFailure.WRONG_VALUE, f"{path}: {len(got)} items, expected {len(expected)}"
            )
        for index, (want, have) in enumerate(zip(expected, got, strict=True)):
            found = _diff(want, have, f"{path}[{index}]")
            if found:
                return found
        return None
    same = expected.strip() == got.strip() if isinstance(expected, str) else expected == got
    if same:
        return None
    return CallVerdict(
        CallFailure.WRONG_VALUE, f"{path}: expected {_short(expected)}, got {_short(got)}"
    )


def differences(
    expected: ToolCall, got: ToolCall, tools: Tools, *, schema_required: bool = False
) -> list[CallVerdict]:
    """Every difference of one returned call from the expected one (none: it is right).

    A wrong name is the only difference reported for it. With ``schema_required`` a parameter
    the tool's schema requires and the call lacks is ``missing_required`` (the corpus leaves it
    off: there the expected calls say what the model wrote, required or not)."""
    if expected.name.strip() != got.name.strip():
        return [
            CallVerdict(CallFailure.WRONG_NAME, f"expected {expected.name!r}, got {got.name!r}")
        ]
    if not isinstance(got.arguments, dict):
        kind, shown = json_type(got.arguments), _short(got.arguments)
        return [CallVerdict(CallFailure.WRONG_TYPE, f"arguments: a {kind}, not an object: {shown}")]
    want: Mapping[str, Any] = expected.arguments
    required = required_parameters(expected.name, tools) if schema_required else ()
    verdicts = [
        CallVerdict(CallFailure.MISSING_REQUIRED, f"{k!r} (the schema requires it)")
        for k in required
        if k not in got.arguments
    ]
    verdicts += [
        CallVerdict(CallFailure.MISSING_ARGUMENT, f"{k!r}")
        for k in want
        if k not in got.arguments and k not in required
    ]
    verdicts += [
        CallVerdict(CallFailure.EXTRA_ARGUMENT, f"{k!r}={_short(got.arguments[k])}")
        for k in got.arguments
        if k not in want
    ]
    for key, value in want.items():
        if key not in got.arguments:
            continue
        have = got.arguments[key]
        bad = mismatch(have, parameter_schema(expected.name, key, tools), key)
        if bad:
            verdicts.append(
                CallVerdict(
                    CallFailure.WRONG_TYPE,
                    f"{bad.path}: schema says {'|'.join(bad.types)}, "
                    f"got {json_type(bad.value)} {_short(bad.value)}",
                )
            )
            continue
        found = _diff(value, have, key)
        if found:
            verdicts.append(found)
    return verdicts


def classify(
    expected: Sequence[ToolCall],
    got: Extraction,
    markup: Sequence[str] = (),
    tools: Tools = None,
    *,
    schema_required: bool = False,
) -> CallVerdict:
    """The single failure class for one case (``ok`` when the calls and content are right);
    calls are compared in the order given (``schema_required``: see :func:`differences`)."""
    if got.crash:
        return CallVerdict(
            CallFailure.PARSE_ERROR, f"uncaught {got.crash}; the whole request fails"
        )
    calls = got.calls
    errors = f" ({got.errors[0]})" if got.errors else ""
    if len(calls) < len(expected):
        if got.errors:
            return CallVerdict(
                CallFailure.PARSE_ERROR, f"{len(calls)}/{len(expected)} calls{errors}"
            )
        if not calls:
            return CallVerdict(CallFailure.NOT_DETECTED, "no call found")
        return CallVerdict(
            CallFailure.DROPPED_CALL, f"{len(calls)} of {len(expected)} calls returned"
        )
    if len(calls) > len(expected):
        names = [c.name for c in calls]
        return CallVerdict(
            CallFailure.EXTRA_CALL, f"{len(calls)} calls {names}, expected {len(expected)}"
        )
    for index, (want, have) in enumerate(zip(expected, calls, strict=True)):
        verdicts = differences(want, have, tools, schema_required=schema_required)
        if verdicts:
            best = min(verdicts, key=lambda v: _PRIORITY.index(v.failure))
            prefix = f"call {index + 1}: " if len(expected) > 1 else ""
            return CallVerdict(best.failure, prefix + best.detail)
    leaked = [m for m in markup if m in got.content]
    if leaked:
        return CallVerdict(
            CallFailure.LEAKED_MARKUP, f"content holds {leaked[0]!r}: {_short(got.content)}"
        )
    return CallVerdict(CallFailure.OK)
