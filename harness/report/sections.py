"""The list of report sections. Adding one: a module with a ``build(run)`` function and a
``SECTION`` value, the partials ``templates/<key>.md.j2`` and ``templates/<key>.html.j2``,
and one line in :func:`default_sections`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.types import RunRecord


@dataclass(frozen=True)
class Section:
    """One part of the report: plain data built from a run, laid out by two partials."""

    key: str  # names the partials templates/<key>.md.j2 and templates/<key>.html.j2
    title: str
    build: Callable[[RunRecord], object | None]  # returns None to leave the section out
    claims: tuple[str, ...] = ()  # metric names (or "prefix.") this section shows

    @property
    def md_template(self) -> str:
        return f"{self.key}.md.j2"

    @property
    def html_template(self) -> str:
        return f"{self.key}.html.j2"


@dataclass(frozen=True)
class BuiltSection:
    key: str
    title: str
    data: object
    template: str


def default_sections() -> tuple[Section, ...]:
    """The built-in sections, in report order."""
    from harness.report import (
        failures,
        header,
        identities,
        ledger,
        matrix,
        memory,
        other,
        performance,
        prompt_cache,
        tool_calls,
    )

    shown = (performance.SECTION, prompt_cache.SECTION, tool_calls.SECTION, memory.SECTION)
    claims = tuple(c for s in shown for c in s.claims)
    return (
        header.SECTION,
        matrix.SECTION,
        *shown,
        other.section(claims),
        failures.SECTION,
        ledger.SECTION,
        identities.SECTION,
    )
