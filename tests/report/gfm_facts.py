"""What a GitHub-flavoured Markdown renderer makes of a report: markdown-it-py (CommonMark with
GFM's tables and strikethrough) parses it, and each block is checked against the source line
it came from.

:func:`gfm_problems` names every place where the rendered document is not what its lines say:
a ``#`` line that does not render as a heading (joined into the paragraph before it), a table
whose rows hold a line that is no table row (a paragraph right after a table becomes a row),
a table separator line that starts no table.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

_HEADING = re.compile(r"^#{1,6}\s")
_SEPARATOR = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")


def _outside_fences(lines: list[str]) -> list[int]:
    kept, fenced = [], False
    for number, line in enumerate(lines):
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced:
            kept.append(number)
    return kept


def gfm_problems(markdown: str) -> list[str]:
    """Each heading, table or paragraph that renders otherwise than its lines say."""
    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    tokens = parser.parse(markdown)
    lines = markdown.split("\n")
    headings = {t.map[0] for t in tokens if t.type == "heading_open" and t.map}
    tables = [t.map for t in tokens if t.type == "table_open" and t.map]
    in_tables = {n for start, end in tables for n in range(start, end)}
    problems = []
    for number in _outside_fences(lines):
        line = lines[number]
        if _HEADING.match(line) and number not in headings:
            problems.append(f"line {number + 1} is no heading: {line[:80]}")
        if _SEPARATOR.match(line) and number not in in_tables:
            problems.append(f"line {number + 1} starts no table: {line[:80]}")
    for start, end in tables:
        for number in range(start, end):
            if not lines[number].startswith("|"):
                problems.append(f"line {number + 1} became a table row: {lines[number][:80]}")
    return problems


def tables_in(markdown: str) -> int:
    """How many tables the renderer makes."""
    parser = MarkdownIt("commonmark").enable("table")
    return sum(1 for t in parser.parse(markdown) if t.type == "table_open")


def unwrapped(markdown: str) -> str:
    """``markdown`` with each wrapped paragraph, quote or list item on one line again (a soft
    break and the ``> `` or indent that continues it become one space), to search for text."""
    return re.sub(r"\n(?:> | +)?(?=[^\s|>#])", " ", markdown)
