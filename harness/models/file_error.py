"""The one-line error shape model converters share: ``<file>: <problem>. <fix>``."""

from __future__ import annotations

from pathlib import Path


class ModelFileError(Exception):
    """A model file could not be read or converted; ``str(error)`` is always one line."""

    def __init__(self, path: Path | str, problem: str, fix: str = "") -> None:
        self.path = Path(path)
        self.problem = " ".join(problem.split())
        self.fix = " ".join(fix.split())
        message = f"{self.path}: {self.problem}"
        if self.fix:
            message = f"{message.rstrip('.')}. {self.fix}"
        super().__init__(message)
