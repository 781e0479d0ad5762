"""The Markdown table body laid out in Python is, character for character, what the per-cell
template loop it replaced wrote, escaping included: hostile text, numbers, empty and missing
fields, links, notes and values repeated over rows (escaped once, shown each time)."""

from __future__ import annotations

import pytest
from markupsafe import Markup

from harness.report.render import template_environment
from harness.report.table import Cell, Column, Table
from harness.report.table_md import md_rows

# table.md.j2's body loop before md_rows, verbatim: the reference
PER_CELL_LOOP = """{% for row in table.rows %}
|{% for cell in row %} {{ cell.text }}{% if cell.link %} [link]({{ cell.link|mdurl }}){% endif %}{% if cell.note %}<br>{{ cell.note }}{% endif %} |{% endfor %}

{% endfor %}
"""  # noqa: E501

HOSTILE = "a\x1b[2J<b>|`[x](y)*_~\\\"&'\u202eb\r\nc\rd\te\u2028\x9b __init__"
COLUMNS = (Column("a"), Column("b", numeric=True, css="nowrap"), Column("c", title="t<"))


@pytest.mark.parametrize(
    "rows",
    [
        (),
        ((Cell("plain"), Cell("1.5 ms", sort=1.5), Cell("")),),
        ((Cell(HOSTILE, sort=HOSTILE, title=HOSTILE, css="good", note=HOSTILE),),),
        ((Cell.linked("x", "https://example.com/?a=1&b=<2>|)"), Cell("n"), Cell("z")),),
        ((Cell("y", note=""), Cell("-", note="n|b"), Cell("q", title="")),) * 3,
        ((Cell(Markup("<i>m</i>\x1b")), Cell(HOSTILE), Cell("1")),) * 2,
        ((Cell(1), Cell(1.0), Cell(True)), (Cell(1.0), Cell(True), Cell(1))),  # type: ignore[arg-type]
    ],
)
def test_md_rows_writes_what_the_per_cell_template_wrote(
    rows: tuple[tuple[Cell, ...], ...],
) -> None:
    table = Table(COLUMNS, rows)
    expected = template_environment("md").from_string(PER_CELL_LOOP).render(table=table)
    assert md_rows(table) == expected
    assert "\x1b" not in md_rows(table)


def test_the_table_partial_lays_out_header_delimiter_and_rows() -> None:
    table = Table(COLUMNS, ((Cell("x|y"), Cell("2"), Cell("z")),))
    template = template_environment("md").get_template("table.md.j2")
    assert template.render(table=table) == ("| a | b | c |\n|---|---:|---|\n| x\\|y | 2 | z |\n")
