"""The contract of a report-section plug-in (entry-point group ``mlx_harness.report_sections``):
a :class:`Section` whose ``templates`` folder holds ``<key>.md.j2`` and ``<key>.html.j2``; its
``build(run)`` returns the data they show (a :class:`Table` of :class:`Cell` rows in
:class:`Column` s renders with ``table.*.j2``). Re-exported by :mod:`harness.api`, which
plug-ins import."""

from __future__ import annotations

from harness.report.sections import Section
from harness.report.table import Cell, Column, Table

__all__ = ["Cell", "Column", "Section", "Table"]
