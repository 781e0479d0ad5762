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
as the field's default, at every depth: a section shows it as missing, never fails on it; in a
list field (``tuple[X, ...]``) only the entries that do not fit are left out.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping
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
        found = _dataclass(cls, artifacts)
        return found if isinstance(found, cls) else cls()

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


class _Unfit:
    """A recorded value that does not fit its field's type."""


UNFIT = _Unfit()


def _fitted(hint: Any, value: Any) -> Any:
    """``value`` as type ``hint``, or :data:`UNFIT`: a dataclass field by field (a field that
    does not fit takes its default), ``tuple[X, ...]`` entry by entry (an entry that does not
    fit is left out), anything else checked by pydantic (lax: a list for a tuple, an int for
    a float)."""
    from pydantic import ValidationError

    args = typing.get_args(hint)
    if type(None) in args:  # X | None
        if value is None:
            return None
        rest = tuple(a for a in args if a is not type(None))
        if len(rest) == 1:
            return _fitted(rest[0], value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass(hint, value)
    if typing.get_origin(hint) is tuple and len(args) == 2 and args[1] is Ellipsis:
        if not isinstance(value, list | tuple):
            return UNFIT
        entries = (_fitted(args[0], v) for v in value)
        return tuple(e for e in entries if e is not UNFIT)
    try:
        return _adapter(hint).validate_python(value)
    except ValidationError:
        return UNFIT


def _dataclass(kind: type, value: Any) -> Any:
    if not isinstance(value, Mapping):
        return UNFIT
    hints = _hints(kind)
    found: dict[str, Any] = {}
    for f in dataclasses.fields(kind):  # type: ignore[arg-type]
        if f.name not in value:
            continue
        fitted = _fitted(hints[f.name], value[f.name])
        if fitted is not UNFIT:
            found[f.name] = fitted
    try:
        return kind(**found)
    except TypeError:  # a field without a default did not fit
        return UNFIT


@functools.cache
def _hints(kind: type) -> dict[str, Any]:
    return typing.get_type_hints(kind)


@functools.cache
def _adapter(hint: Any) -> TypeAdapter[Any]:
    """The validator of one type (built once: pydantic advises reuse)."""
    from pydantic import TypeAdapter

    return TypeAdapter(hint)


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
