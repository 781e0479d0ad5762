"""The HTML table body laid out in Python is, character for character, what the per-cell
template loop it replaced wrote, escaping included: hostile text, numbers, empty and missing
fields, links and notes."""

from __future__ import annotations

import pytest
from markupsafe import Markup

from harness.report.render import template_environment
from harness.report.table import Cell, Column, Table
from harness.report.table_html import html_rows

# table.html.j2's body loop before html_rows, verbatim: the reference
PER_CELL_LOOP = """{% for row in table.rows %}
<tr>
{% for cell in row %}
{% set column = table.columns[loop.index0] %}
<td class="{{ 'num' if column.numeric else '' }} {{ column.css }} {{ cell.css or '' }}"{% if cell.sort is not none %} data-sort="{{ cell.sort }}"{% endif %}{% if cell.title %} title="{{ cell.title }}"{% endif %}>{{ cell.text }}{% if cell.link %} <a href="{{ cell.link }}" rel="noopener noreferrer">link</a>{% endif %}{% if cell.note %}<div class="note">{{ cell.note }}</div>{% endif %}</td>
{% endfor %}
</tr>
{% endfor %}
"""  # noqa: E501

HOSTILE = "a\x1b[2J<b>\"&'\u202eb\r\nc\rd\te\u2028\x9b"
COLUMNS = (Column("a"), Column("b", numeric=True, css="nowrap"), Column("c", title="t<"))


@pytest.mark.parametrize(
    "rows",
    [
        (),
        ((Cell("plain"), Cell("1.5 ms", sort=1.5), Cell("")),),
        ((Cell(HOSTILE, sort=HOSTILE, title=HOSTILE, css="good", note=HOSTILE),),),
        ((Cell.linked("x", "https://example.com/?a=1&b=<2>"), Cell("n", sort=0), Cell("z")),),
        ((Cell("y", sort=float("nan"), note=""), Cell("-", sort=-3), Cell("q", title="")),) * 3,
        ((Cell("t", sort=True), Cell(Markup("<i>m</i>\x1b"), css=None), Cell("1", sort="s")),),
        # equal values of other types are shown apart (1, 1.0, True), each escaped once
        (
            (Cell("1", sort=1), Cell("2", sort=1.0), Cell("3", sort=True)),
            (Cell("a", sort=True), Cell("b", sort=1), Cell("c", sort=1.0)),
        ),
    ],
)
def test_html_rows_writes_what_the_per_cell_template_wrote(
    rows: tuple[tuple[Cell, ...], ...],
) -> None:
    table = Table(COLUMNS, rows)
    expected = template_environment("html").from_string(PER_CELL_LOOP).render(table=table)
    assert html_rows(table) == expected
    assert "\x1b" not in html_rows(table)
