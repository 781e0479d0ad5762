"""The body rows of an HTML table, laid out in Python: what ``table.html.j2``'s per-cell loop
wrote, character for character, without a template pass per cell (a 10,000-case compare.html
has some 200,000 cells). Every value is escaped as the HTML environment escapes a ``{{ value }}``:
:func:`harness.report.escape.html_finalize`, then markupsafe's escape; once per distinct value
of a table (:class:`harness.report.shown_once.ShownOnce`)."""

from __future__ import annotations

from markupsafe import Markup, escape

from harness.report.escape import html_finalize
from harness.report.shown_once import ShownOnce
from harness.report.table import Table


def _shown(value: object) -> str:
    return str(escape(html_finalize(value)))


def html_rows(table: Table) -> Markup:
    """``<tr>`` .. ``</tr>`` of each row, one ``<td>`` a line, each line ending in a newline."""
    shown = ShownOnce(_shown)
    prefixes = [
        f'<td class="{_shown("num" if c.numeric else "")} {_shown(c.css)} ' for c in table.columns
    ]
    parts: list[str] = []
    add = parts.append
    for row in table.rows:
        add("<tr>\n")
        for prefix, cell in zip(prefixes, row, strict=False):
            add(prefix)
            if cell.css:
                add(shown(cell.css))
            add('"')
            sort = cell.sort
            if sort is not None:  # a number is its own text: nothing in it to escape
                number = type(sort) is float or type(sort) is int
                add(f' data-sort="{sort if number else shown(sort)}"')
            if cell.title:
                add(f' title="{shown(cell.title)}"')
            add(">")
            text = cell.text
            add(shown[text] if type(text) is str else shown(text))
            if cell.link:
                add(f' <a href="{shown(cell.link)}" rel="noopener noreferrer">link</a>')
            if cell.note:
                add(f'<div class="note">{shown(cell.note)}</div>')
            add("</td>\n")
        add("</tr>\n")
    return Markup("".join(parts))
