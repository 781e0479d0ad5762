"""The body rows of a Markdown table, laid out in Python: what ``table.md.j2``'s per-cell loop
wrote, character for character, without a template pass per cell (a 10,000-case compare.md has
some 200,000 cells). Every value is escaped as the Markdown environment escapes a
``{{ value }}`` (:func:`harness.report.escape.md_finalize`), once per distinct value of a
table: a model's name on 500 rows is escaped once."""

from __future__ import annotations

from markupsafe import Markup

from harness.report.escape import md_finalize, md_url
from harness.report.shown_once import ShownOnce
from harness.report.table import Table


def md_rows(table: Table) -> Markup:
    """``| cell | cell |`` of each row, each line ending in a newline."""
    shown = ShownOnce(lambda value: str(md_finalize(value)))
    parts: list[str] = []
    add = parts.append
    for row in table.rows:
        add("|")
        for cell in row:
            add(" ")
            text = cell.text
            add(shown[text] if type(text) is str else shown(text))
            if cell.link:
                add(" [link](")
                add(shown(md_url(cell.link)))
                add(")")
            if cell.note:
                add("<br>")
                add(shown(cell.note))
            add(" |")
        add("\n")
    return Markup("".join(parts))
