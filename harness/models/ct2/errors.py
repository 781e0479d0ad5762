"""The one error the CTranslate2 reader and converter raise: one line naming file and problem."""

from __future__ import annotations

from pathlib import Path


class CT2FormatError(Exception):
    """A CTranslate2 model directory could not be read or converted.

    ``str(error)`` is always one line: ``<file>: <problem>. <fix>``.
    """

    def __init__(self, path: Path | str, problem: str, fix: str = "") -> None:
        self.path = Path(path)
        self.problem = " ".join(problem.split())
        self.fix = " ".join(fix.split())
        message = f"{self.path}: {self.problem}"
        if self.fix:
            message = f"{message.rstrip('.')}. {self.fix}"
        super().__init__(message)
