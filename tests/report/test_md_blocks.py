"""report.md as GitHub renders it (markdown-it-py with GFM tables): every heading a heading,
every table a table with no paragraph inside, prose lines under 120 characters; and the blank
lines and wraps that make it so."""

from __future__ import annotations

import dataclasses

import pytest
from gfm_facts import gfm_problems, tables_in
from report_fixtures import case, make_run, metric, realistic_run

from harness.core.types import Unit
from harness.report import render_markdown
from harness.report.comparison import with_comparison
from harness.report.md_blocks import WIDTH, gfm_blocks, wrap
from harness.results.compare import compare_runs

TABLE = "| a | b |\n|---|---|\n| 1 | 2 |"
LONG = " ".join(["word"] * 60)  # 299 characters


@pytest.mark.parametrize(
    ("source", "rendered", "broken"),
    [
        # a paragraph right after a table would be one more row
        (
            f"{TABLE}\n0 metric comparison(s) unchanged.",
            f"{TABLE}\n\n0 metric comparison(s) unchanged.",
            True,
        ),
        # a table right after a paragraph: markdown-it takes it, some renderers do not
        (f"Rows:\n{TABLE}", f"Rows:\n\n{TABLE}", False),
        # an HTML block runs to the next blank line: a heading right after it is swallowed
        ("</details>\n## Next", "</details>\n\n## Next", True),
        ("text\n### A\n### B\ntext", "text\n\n### A\n\n### B\n\ntext", False),
        ("a\n\n\n\nb", "a\n\nb", False),  # one blank line at most
        ("one\ntwo", "one\ntwo", False),  # a paragraph's lines stay together
        ("```\n| x |\n## not a heading\n\n\n```", "```\n| x |\n## not a heading\n\n\n```", False),
    ],
)
def test_blank_lines_where_gfm_needs_them(source: str, rendered: str, broken: bool) -> None:
    assert gfm_blocks(source, "report.html") == rendered
    assert bool(gfm_problems(source)) is broken  # the renderer sees what was wrong
    assert gfm_problems(rendered) == []


def test_a_long_line_is_wrapped_where_no_new_block_starts() -> None:
    lines = wrap(LONG)
    assert len(lines) == 3 and all(len(line) <= WIDTH for line in lines)
    assert " ".join(lines) == LONG
    # a wrapped line never starts with what opens a list, quote, heading or table
    opener = wrap("x" * 115 + " - 1. # | > tail " + LONG)
    assert all(not line.startswith(("-", "1.", "#", "|", ">")) for line in opener)
    # a code span or bold text may start a line: neither opens a block
    spans = wrap("x" * 115 + " `--flag` **bold** " + LONG)
    assert spans[1].startswith("`--flag` **bold**") and all(len(line) <= WIDTH for line in spans)
    assert wrap("    indented " + LONG) == ["    indented " + LONG]  # code stays whole
    assert wrap("<details><summary>" + LONG) == ["<details><summary>" + LONG]
    quote, item = wrap("> " + LONG), wrap("- " + LONG)  # a quote goes on quoted, an item indented
    assert all(line.startswith("> ") for line in quote) and len(quote) == 3
    assert item[0].startswith("- word") and all(line.startswith("  word") for line in item[1:])
    assert gfm_problems("\n".join(item)) == [] and all(len(line) <= WIDTH for line in item)
    assert wrap("x" * 300) == ["x" * 300]  # a word longer than the width stays whole


def _prose(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if not line.startswith("|")]


def test_the_whole_report_renders_as_its_lines_say() -> None:
    run = realistic_run()
    markdown = render_markdown(run)
    assert gfm_problems(markdown) == []
    assert tables_in(markdown) == sum(
        1 for line in markdown.splitlines() if line.startswith("|---")
    )
    assert [line for line in _prose(markdown) if len(line) > WIDTH] == []
    performance = markdown.split("## Performance", 1)[1].split("\n## ", 1)[0]
    assert "### Speed · throughput" in performance and "### Roofline" not in performance
    assert max(len(line) for line in performance.splitlines()) <= 130  # was 19 columns, 772


def test_the_report_with_a_comparison_renders_as_its_lines_say() -> None:
    decode = "throughput.decode_tps"
    base = make_run(
        [
            case(
                "m",
                "throughput",
                metrics=[metric(decode, Unit.TOKENS_PER_SECOND, 20, 21, 20, 19, 20)],
            )
        ]
    )
    cur = make_run(
        [case("m", "throughput", metrics=[metric(decode, Unit.TOKENS_PER_SECOND, 9, 9.5, 9, 9, 9)])]
    )
    comparison = compare_runs(dataclasses.replace(base, run_id="base"), cur)
    markdown = render_markdown(cur, with_comparison(comparison))
    assert "### Metric changes" in markdown
    assert gfm_problems(markdown) == []
    assert [line for line in _prose(markdown) if len(line) > WIDTH] == []


def test_a_word_that_would_open_a_block_moves_with_the_word_before_it() -> None:
    line = "x" * 115 + " TPOT = (e2e − TTFT) / (tokens − 1) per request; " + LONG
    lines = wrap(line)
    assert all(len(piece) <= WIDTH for piece in lines)  # was 236 characters: "=" stayed put
    assert not any(piece.startswith(("=", "-", "/")) for piece in lines[1:])
    assert lines[1].startswith("TPOT = (e2e") and " ".join(lines) == line


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("### short", ["### short"]),
        (
            "### ❌ failed: " + "&lt;script>x " * 20,
            [
                "### ❌ failed: " + ("&lt;script>x " * 8).rstrip() + "…",  # no half entity
                "",
                "A heading ending in … is cut to fit; compare.html holds its whole text.",
            ],
        ),
    ],
)
def test_a_long_heading_is_cut_and_says_where_it_is_whole(line: str, shown: list[str]) -> None:
    markdown = gfm_blocks(f"{line}\ntext", "compare.html")
    assert markdown.split("\n")[: len(shown)] == shown
    assert all(len(piece) <= WIDTH for piece in markdown.split("\n"))
    assert gfm_problems(markdown) == [] and markdown.endswith("\n\ntext")
