"""What a report section is: a key, a title, a ``build(run)`` function, the metrics it shows
and its place in the report (``order``, lowest first).

The built-in sections are registered in :mod:`harness.report.contents` as plug-ins register
theirs (the ``mlx_harness.report_sections`` entry-point group). The places, by band:
``OPENING`` (summary, compatibility, charts: 100-199), ``METRICS`` (a section per kind of
measurement: 200-499), ``PLUGIN_ORDER`` (a plug-in's section unless it says otherwise),
``CLOSING`` ("Other metrics", failures, ledger, machine, models: 900 on).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.core.types import RunRecord

PLUGIN_PREFIX = "plugin"  # a plug-in section's partials load as plugin/<key>/<key>.<kind>.j2

OPENING = 100  # the summary and the views of the whole run
METRICS = 200  # the sections that show a kind of metric
PLUGIN_ORDER = 500  # a plug-in's section by default: after the built-in metric sections
CLOSING = 900  # "Other metrics", then what explains the run (failures, ledger, machine, models)


@dataclass(frozen=True)
class Section:
    """One part of the report: plain data built from a run, laid out by two partials."""

    key: str  # names the partials templates/<key>.md.j2 and templates/<key>.html.j2
    title: str
    build: Callable[[RunRecord], object | None]  # returns None to leave the section out
    claims: tuple[str, ...] = ()  # metric names (or "prefix.") this section shows
    # A plug-in's section, or a scenario folder's (harness/scenarios/<name>/section.py), brings
    # its partials: the folder holding <key>.md.j2 and <key>.html.j2 (they may include the
    # built-in ones, e.g. "table.md.j2").
    templates: Path | None = None
    order: int = PLUGIN_ORDER  # its place in the report, lowest first (the bands above)

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
