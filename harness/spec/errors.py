"""Suite errors: one line each, naming file:line:column, what is wrong, and the fix."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SuiteError:
    path: str
    line: int
    column: int
    message: str
    hint: str = ""

    def __str__(self) -> str:
        hint = f"; {self.hint}" if self.hint else ""
        return f"{self.path}:{self.line}:{self.column}: {self.message}{hint}"


class SuiteInvalid(Exception):
    """Raised with every error found in a suite (and its includes)."""

    def __init__(self, errors: list[SuiteError]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors
