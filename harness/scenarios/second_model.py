"""A second model a scenario loads beside the case's own (``quality``'s reference,
``speculative``'s draft): an embedded model's name or a model directory, resolved to a folder."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, model_validator


class SecondModel(BaseModel):
    """An embedded model's name (``embedded: zoo/llama``) or a model directory (``path: DIR``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    embedded: str | None = None
    path: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> SecondModel:
        if (self.embedded is None) == (self.path is None):
            raise ValueError("give exactly one of `embedded: NAME` or `path: DIR`")
        return self

    @property
    def label(self) -> str:
        return f"embedded: {self.embedded}" if self.embedded else f"path: {self.path}"


class SecondModelError(ValueError):
    """The model cannot be found; the message is one line with the fix."""


def second_model_path(ref: SecondModel, role: str) -> Path:
    """The folder ``ref`` names; :class:`SecondModelError` naming the ``role`` ("reference",
    "draft") when it is no model directory, no embedded model or one not prepared."""
    if ref.path is not None:
        path = Path(ref.path).expanduser()
        if not path.is_dir():
            raise SecondModelError(f"{role} path {ref.path} is not a model directory")
        return path
    from harness.models.catalog import find_embedded

    found = find_embedded(str(ref.embedded))
    if found is None:
        raise SecondModelError(
            f"{role} {ref.embedded!r} is no embedded model; see `mlx-harness models list`"
        )
    if not found.prepared:
        raise SecondModelError(
            f"{role} {found.name} is not prepared; run `mlx-harness models prepare {found.name}`"
        )
    return found.path
