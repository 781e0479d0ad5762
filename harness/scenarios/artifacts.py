"""A scenario's typed artifacts: what its report section reads, as a frozen dataclass declared
next to the scenario, with its conversion to and from the record in one place.

A scenario declares ``@dataclass(frozen=True) class <Name>Artifacts(ScenarioArtifacts)``, every
field with its default (what a record without it reads as). The scenario writes
``<Name>Artifacts(...).to_record()`` into its output's artifacts (or the same keys by hand: the
field names are the record's keys); its report section reads ``<Name>Artifacts.of(result)``
and its typed fields, never ``result.artifacts["key"]`` (``tests/test_seams.py`` checks).

A record of an older format is brought to today's shape as it loads
(:mod:`harness.results.migrations`), so :meth:`ScenarioArtifacts.from_record` reads today's
shape only. A value that does not fit its field's type (a hand-edited or damaged record) reads
as the field's default: a section shows it as missing, never fails on it; in a list field
(``tuple[X, ...]``) only the entries that do not fit are left out.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Iterator, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, Self

from harness.core.types import CaseResult, JSONValue

if TYPE_CHECKING:
    from pydantic import TypeAdapter


class ScenarioArtifacts:
    """Base of a scenario's typed artifacts (subclasses are frozen dataclasses)."""

    @classmethod
    def from_record(cls, artifacts: Mapping[str, Any]) -> Self:
        """The typed artifacts of a case's recorded ``artifacts``: each field from its key,
        checked against the field's type; absent or not fitting: the field's default."""
        from pydantic import ValidationError

        found: dict[str, Any] = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if f.name not in artifacts or artifacts[f.name] is None:
                continue
            value = artifacts[f.name]
            try:
                found[f.name] = _adapter(typing.cast(Any, cls), f.name).validate_python(value)
            except ValidationError:
                entries = _entries(typing.cast(Any, cls), f.name)
                if entries is not None and isinstance(value, list):
                    found[f.name] = tuple(_fitting(entries, value))
                # else: not this field's type, its default
        return cls(**found)

    @classmethod
    def of(cls, result: CaseResult) -> Self:
        """The typed artifacts of ``result``."""
        return cls.from_record(result.artifacts)

    def to_record(self) -> dict[str, JSONValue]:
        """The artifacts as the record holds them: fields at None left out, tuples as lists,
        nested dataclasses as objects, enums as their values."""
        return {
            f.name: _plain(getattr(self, f.name))
            for f in dataclasses.fields(self)  # type: ignore[arg-type]
            if getattr(self, f.name) is not None
        }


@functools.cache
def _adapter(cls: Any, name: str) -> TypeAdapter[Any]:
    """The validator of one field's type (built once per field: pydantic advises reuse)."""
    from pydantic import TypeAdapter

    return TypeAdapter(typing.get_type_hints(cls)[name])


@functools.cache
def _entries(cls: Any, name: str) -> TypeAdapter[Any] | None:
    """The validator of one entry of a ``tuple[X, ...]`` (or ``... | None``) field; None for
    another field."""
    from pydantic import TypeAdapter

    hint = typing.get_type_hints(cls)[name]
    options = [a for a in typing.get_args(hint) if a is not type(None)]
    if len(options) == 1 and type(None) in typing.get_args(hint):  # X | None: X
        hint = options[0]
    args = typing.get_args(hint)
    if typing.get_origin(hint) is tuple and len(args) == 2 and args[1] is Ellipsis:
        return TypeAdapter(args[0])
    return None


def _fitting(entries: TypeAdapter[Any], values: list[Any]) -> Iterator[Any]:
    from pydantic import ValidationError

    for value in values:
        try:
            yield entries.validate_python(value)
        except ValidationError:
            continue


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if getattr(value, f.name) is not None
        }
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
