"""What a report section is: a key, a title, a ``build(run)`` function and the metrics it shows.

The sections a report has, in order, are listed in :mod:`harness.report.contents`; plug-ins add
theirs through the ``mlx_harness.report_sections`` entry-point group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.core.types import RunRecord

PLUGIN_PREFIX = "plugin"  # a plug-in section's partials load as plugin/<key>/<key>.<kind>.j2


@dataclass(frozen=True)
class Section:
    """One part of the report: plain data built from a run, laid out by two partials."""

    key: str  # names the partials templates/<key>.md.j2 and templates/<key>.html.j2
    title: str
    build: Callable[[RunRecord], object | None]  # returns None to leave the section out
    claims: tuple[str, ...] = ()  # metric names (or "prefix.") this section shows
    # A plug-in's section brings its partials: the folder holding <key>.md.j2 and
    # <key>.html.j2 (they may include the built-in ones, e.g. "table.md.j2").
    templates: Path | None = None

    @property
    def md_template(self) -> str:
        return f"{self._prefix}{self.key}.md.j2"

    @property
    def html_template(self) -> str:
        return f"{self._prefix}{self.key}.html.j2"

    @property
    def _prefix(self) -> str:
        return f"{PLUGIN_PREFIX}/{self.key}/" if self.templates is not None else ""


@dataclass(frozen=True)
class BuiltSection:
    key: str
    title: str
    data: object
    template: str
