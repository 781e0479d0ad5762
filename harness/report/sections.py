"""What a report section is: a key, a title, a ``build(run)`` function and the metrics it shows.

The sections a report has, in order, are listed in :mod:`harness.report.contents`.
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
