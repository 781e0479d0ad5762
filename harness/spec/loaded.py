"""A suite as loaded: the validated file, its models (``select:`` entries expanded) and
``expect:`` entries, each with the file and position it came from, and what each selector chose.

Plain values, shared by the loader and the steps after it (checks, expansion, planning,
ledger), so none of those needs the loader itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.core.yamlpos import Located
from harness.spec.errors import SuiteError
from harness.spec.schema import ExpectEntry, ModelEntry, SelectSource, Suite
from harness.spec.select import Facts


@dataclass(frozen=True)
class Chosen:
    name: str
    source: SelectSource
    backend: str
    facts: Facts


@dataclass(frozen=True)
class LeftOut:
    name: str
    source: SelectSource
    reason: str


@dataclass(frozen=True)
class Selection:
    """What one ``select:`` entry expanded to."""

    path: Path
    line: int
    column: int
    chosen: tuple[Chosen, ...]
    left_out: tuple[LeftOut, ...]

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(frozen=True)
class SourcedModel:
    """A model entry with the file and position it came from."""

    entry: ModelEntry
    path: Path
    line: int
    column: int


@dataclass(frozen=True)
class SourcedExpect:
    """An ``expect:`` (known-broken ledger) entry with the file and position it came from."""

    entry: ExpectEntry
    path: Path
    line: int
    column: int

    @property
    def source(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class LoadedSuite:
    path: Path
    suite: Suite
    name: str
    sha256: str
    located: Located
    models: tuple[SourcedModel, ...]  # select: entries already expanded
    expect: tuple[SourcedExpect, ...]
    warnings: tuple[SuiteError, ...] = field(default_factory=tuple)
    selections: tuple[Selection, ...] = ()  # what each select: entry chose and left out


def suite_name(path: Path) -> str:
    name = path.name
    for suffix in (".suite.yaml", ".suite.yml", ".yaml", ".yml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name
