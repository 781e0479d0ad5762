"""The one error the GGUF importer raises: one line naming the file, the problem and a fix."""

from __future__ import annotations

from harness.models.file_error import ModelFileError


class GGUFImportError(ModelFileError):
    """A GGUF file could not be read or converted.

    ``str(error)`` is always one line: ``<file>: <problem>. <fix>``.
    """
