"""Field types of the suite schema that read what people write: one value or a list, sizes
with units, enum names with did-you-mean. Each keeps an honest JSON Schema for editors."""

from __future__ import annotations

import difflib
from enum import Enum
from typing import Annotated, Any, TypeVar

from pydantic import BeforeValidator, WithJsonSchema

from harness.core.value_errors import value_error
from harness.spec.sizes import PATTERN, SPELLED, SizeError, parse_size

E = TypeVar("E", bound=Enum)


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, (str, int)) and not isinstance(value, bool) else value


def _size(value: Any) -> int:
    try:
        return parse_size(value)
    except SizeError as exc:
        raise value_error(exc.message, exc.hint) from None


def _one_or_many_schema(item: dict[str, Any], description: str) -> WithJsonSchema:
    return WithJsonSchema(
        {"anyOf": [item, {"type": "array", "items": item}], "description": description}
    )


# one value or a list of them, read as a list
ONE_OR_MANY = BeforeValidator(_one_or_many)

# a glob or a list of globs, matched with fnmatch (case-sensitive)
Globs = Annotated[
    list[str],
    ONE_OR_MANY,
    _one_or_many_schema({"type": "string"}, "a glob (fnmatch: *, ?, [..]) or a list of globs"),
]


def names_model(names: list[str] | None, model: str) -> bool:
    """Whether a scenario entry's ``models:`` (names or globs; None: every model) takes
    ``model``."""
    import fnmatch

    return names is None or any(fnmatch.fnmatchcase(model, name) for name in names)


# a whole number or a list of them
Ints = Annotated[
    list[int],
    ONE_OR_MANY,
    _one_or_many_schema({"type": "integer", "minimum": 1}, "a number or a list of numbers"),
]

# bytes: a whole number, or text with a decimal or binary unit ("1 GB", "500 MiB")
ByteCount = Annotated[
    int,
    BeforeValidator(_size),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 0},
                {"type": "string", "pattern": PATTERN},
            ],
            "description": "bytes, or a number with a unit: " + ", ".join(SPELLED),
        }
    ),
]


def known_name(enum: type[E], what: str) -> BeforeValidator:
    """Validator of one ``enum`` value: an unknown name says which one was meant."""
    known = [str(member.value) for member in enum]

    def check(value: Any) -> Any:
        if isinstance(value, str) and value not in known:
            close = difflib.get_close_matches(value, known, n=1)
            hint = f"did you mean '{close[0]}'?" if close else "known: " + ", ".join(known)
            raise value_error(f"unknown {what} '{value}'", hint)
        return value

    return BeforeValidator(check)


def enum_schema(enum: type[E]) -> WithJsonSchema:
    """JSON Schema of one of ``enum``'s values or a list of them."""
    names = [str(member.value) for member in enum]
    return _one_or_many_schema({"enum": names}, "one of " + ", ".join(names) + ", or a list")
