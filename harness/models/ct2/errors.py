"""The one error the CTranslate2 reader and converter raise: one line naming file and problem."""

from __future__ import annotations

from harness.models.file_error import ModelFileError


class CT2FormatError(ModelFileError):
    """A CTranslate2 model directory could not be read or converted.

    ``str(error)`` is always one line: ``<file>: <problem>. <fix>``.
    """
