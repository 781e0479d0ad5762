"""Suite errors: one line each, naming file:line:column, what is wrong, and the fix."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.core.value_errors import SUITE_VALUE
from harness.core.visible_text import visible

# pydantic error type of the harness's own value errors; ctx carries the message and the fix
SHOWN_CHARS = 60  # a value quoted in an error is cut to this many characters

# Unicode categories escaped in error lines: controls (ANSI escapes, line breaks), format
# characters (bidi overrides), line/paragraph separators, lone surrogates


def one_line(text: str) -> str:
    """``text`` with every acting character (controls, line breaks, bidi controls) written as
    an escape (``\\x1b``, ``\\x0a``, ``\\u202e``) by the one escaper, so it stays one inert
    line in a terminal."""
    return visible(text)


def shorten(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` cut to ``limit`` characters, marking the cut with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class SuiteError:
    path: str
    line: int
    column: int
    message: str
    hint: str = ""

    def __str__(self) -> str:
        hint = f"; {self.hint}" if self.hint else ""
        return one_line(f"{self.path}:{self.line}:{self.column}: {self.message}{hint}")


class SuiteInvalid(Exception):
    """Raised with every error found in a suite (and its includes)."""

    def __init__(self, errors: list[SuiteError]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors


# pydantic error type -> (what was expected, an example value)
EXPECTED = {
    "int_parsing": ("a whole number", "3"),
    "int_type": ("a whole number", "3"),
    "int_from_float": ("a whole number", "3"),
    "float_parsing": ("a number", "2.5"),
    "float_type": ("a number", "2.5"),
    "bool_parsing": ("true or false", "true"),
    "bool_type": ("true or false", "true"),
    "string_type": ("text", "my-model"),
    "list_type": ("a list", "[a, b]"),
    "dict_type": ("a mapping", "{key: value}"),
    "model_type": ("a mapping", "{key: value}"),
    "date_from_datetime_parsing": ("a date", "2026-12-31"),
    "date_parsing": ("a date", "2026-12-31"),
    "date_type": ("a date", "2026-12-31"),
    "finite_number": ("a finite number", "2.5"),
}


def describe_value(where: str, key: str, error: Mapping[str, Any]) -> tuple[str, str]:
    """Message and hint for a pydantic value error at ``where`` (``key`` is the last part)."""
    if error.get("type") == SUITE_VALUE:
        ctx = error.get("ctx") or {}
        return f"{where}: {ctx.get('message', '')}", str(ctx.get("hint", ""))
    got = error.get("input")
    shown = shorten(repr(got)) if not isinstance(got, (dict, list)) else type(got).__name__
    expected = EXPECTED.get(str(error.get("type")))
    if expected is not None:
        example = f"- {expected[1]}" if key.isdigit() else f"{key}: {expected[1]}"  # a list item
        return f"{where}: expected {expected[0]}, got {shown}", f"e.g. {example}"
    message = str(error.get("msg", "invalid value")).replace("Value error, ", "")
    return f"{where}: {message} (got {shown})", "change the value to one that is allowed"
