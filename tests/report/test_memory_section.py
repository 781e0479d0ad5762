"""The load and memory section is split by scenario: each table has only the columns its cases
measured, so no table is mostly empty cells."""

from __future__ import annotations

from report_fixtures import realistic_run

from harness.report import memory, render_markdown
from harness.report.table import Table


def _labels(table: Table) -> list[str]:
    return [c.label for c in table.columns]


def test_each_scenario_gets_a_table_of_its_own_columns() -> None:
    data = memory.build(realistic_run())
    assert data is not None
    split = dict(data.by_scenario)
    assert sorted(split) == ["load", "throughput"]
    assert "load (s)" in _labels(split["load"]) and "MLX peak (MiB)" not in _labels(split["load"])
    assert "MLX peak (MiB)" in _labels(split["throughput"])
    assert "load (s)" not in _labels(split["throughput"])
    assert all(row[1].text == "load" for row in split["load"].rows)
    whole = len(data.table.rows)
    assert sum(len(t.rows) for t in split.values()) == whole  # every row, once


def test_markdown_names_each_scenario_table() -> None:
    markdown = render_markdown(realistic_run())
    section = markdown.split("Load and memory", 1)[1]
    assert "**load**" in section and "**throughput**" in section
