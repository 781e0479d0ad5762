"""Tables that fit a CI job summary: a table wider than 120 characters a line becomes tables over
column groups, each repeating the key columns; a cell too long for any group is cut with ``…``
where no escape, entity, tag, code span or emoji breaks, and GitHub (markdown-it-py with GFM
tables) renders every piece as a table whose cells say what the whole cells said."""

from __future__ import annotations

from pathlib import Path

import pytest
from gfm_facts import gfm_problems, tables_in
from hostile_run import hostile_runs
from markdown_it import MarkdownIt
from report_fixtures import realistic_run

from harness.report import default_sections, render, render_markdown
from harness.report.comparison import section
from harness.report.md_cut import CUT
from harness.report.md_tables import CONTINUED, WIDTH, fit_tables
from harness.results.compare import compare_runs

NOTE = f"A cell ending in {CUT} is cut to fit; report.html holds its whole text."


def _table(header: list[str], rows: list[list[str]], numeric: int = 0) -> str:
    delimiter = ["---"] * (len(header) - numeric) + ["---:"] * numeric
    lines = [header, *rows]
    return "\n".join(
        [
            "| " + " | ".join(lines[0]) + " |",
            "|" + "|".join(delimiter) + "|",
            *("| " + " | ".join(row) + " |" for row in lines[1:]),
        ]
    )


def _parsed(markdown: str) -> list[list[list[str]]]:
    """Each table markdown-it makes, as rows of cell sources (header first)."""
    tables: list[list[list[str]]] = []
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    for token in tokens:
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            tables[-1].append([])
        elif token.type == "inline" and tables and tables[-1]:
            tables[-1][-1].append(token.content)
    return tables


WIDE_HEADER = ["model", "scenario", "params", "status"] + [f"metric {n} (tok/s)" for n in range(12)]
WIDE_ROWS = [
    [model, scenario, "pp128 tg32", "✅ passed"] + [f"{n * 11.5:.1f} ± 1.2" for n in range(12)]
    for model in ("tiny-llama@mlx_lm.server", "tiny-qwen2-vl@mlx_vlm.server")
    for scenario in ("throughput", "http_throughput")
]


@pytest.mark.parametrize(
    ("header", "rows", "keys"),
    [
        # model repeats over scenarios: model and scenario name a row
        (WIDE_HEADER, WIDE_ROWS, 2),
        # one column per model (API contracts): the check names a row
        (
            ["check", *(f"model-{n}@mlx_lm.server-batch{n} (mlx_lm.server)" for n in range(5))],
            [[f"check_{n}", *(["pass"] * 5)] for n in range(6)],
            1,
        ),
        # a long reason beside short keys (the compatibility matrix, the ledger)
        (
            ["model", "load", "greedy", "reason"],
            [
                [f"m{n}", "✅ passed", "⚠ xfailed", "known: " + "the answer was empty " * 12]
                for n in range(3)
            ],
            1,
        ),
        # a long first column (evidence: the request) is cut too, in every group
        (
            ["request", "answer", "status"],
            [["POST /v1/chat " + '{"messages": \\[' * 30, "HTTP 200<br>" * 20, "ok"]],
            1,
        ),
    ],
)
def test_a_wide_table_is_split_over_groups_that_fit_and_repeat_the_keys(
    header: list[str], rows: list[list[str]], keys: int
) -> None:
    source = _table(header, rows)
    fitted = fit_tables(source, "report.html")
    assert max(len(line) for line in fitted.splitlines()) <= WIDTH
    assert gfm_problems(fitted) == []
    tables = _parsed(fitted)
    assert len(tables) == tables_in(fitted) == fitted.count(CONTINUED) + 1 > 1
    shown: list[str] = []
    for table in tables:
        assert [len(table)] == [len(rows) + 1]  # every group holds every row
        names = [table[0][:keys], *(row[:keys] for row in table[1:])]
        whole = [header[:keys], *(row[:keys] for row in rows)]
        assert all(  # the key cells, whole or cut from the whole
            name == full or (name[-1].endswith(CUT) and full.startswith(name[:-1]))
            for got, want in zip(names, whole, strict=True)
            for name, full in zip(got, want, strict=True)
        )
        shown.extend(table[0][keys:])
    assert shown == header[keys:]  # every other column once, in its order
    assert (NOTE in fitted) is any(CUT in cell for table in tables for row in table for cell in row)


@pytest.mark.parametrize(
    "source",
    [
        _table(["a", "b"], [["1", "2"]]),  # narrow
        _table(["model", "reason"], [["m", "x" * 112]]),  # exactly as wide as it may be
        "```\n" + _table(["a"], [["x" * 300]]) + "\n```",  # fenced code stays as it is
        "| not a table " + "x" * 200 + " |\nno delimiter row",
    ],
)
def test_what_fits_or_is_no_table_is_kept(source: str) -> None:
    assert fit_tables(source, "report.html") == source


def test_a_cut_says_which_file_holds_the_whole_text() -> None:
    fitted = fit_tables(_table(["k", "v"], [["a", "word " * 60]]), "compare.html")
    assert "compare.html holds its whole text" in fitted
    assert max(len(line) for line in fitted.splitlines()) <= WIDTH


def _long_lines(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if len(line) > WIDTH]


def test_the_whole_report_has_no_line_over_the_width() -> None:
    markdown = render_markdown(realistic_run())
    assert _long_lines(markdown) == []
    assert gfm_problems(markdown) == []


LONG_HOSTILE = [
    "<script>alert(1)</script> `tick` a|b &amp; 👩‍👩‍👧‍👦 " * 8,
    "known broken because " + "the server answered nothing useful " * 10,
]


def test_a_hostile_report_and_its_comparison_have_no_line_over_the_width(
    tmp_path: Path,
) -> None:
    baseline, current = hostile_runs(LONG_HOSTILE, tmp_path / "runs")
    defaults = default_sections()
    sections = (defaults[0], section(compare_runs(baseline, current)), *defaults[1:])
    paths = render(current, tmp_path / "report", sections)
    markdown = paths.md.read_text()
    assert _long_lines(markdown) == []
    assert gfm_problems(markdown) == []
    assert CONTINUED in markdown and NOTE in markdown  # it did split and cut
    assert "<script>" not in markdown
    assert LONG_HOSTILE[1].strip() in paths.html.read_text()  # report.html holds it whole
