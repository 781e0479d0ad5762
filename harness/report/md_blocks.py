"""Blank lines where GitHub Markdown needs them, whatever a template left out.

GFM joins a heading to nothing, but a table to the paragraph line right after it (``0 metric
comparison(s) unchanged.`` under a table becomes one more row) and a table line right after a
paragraph to that paragraph. :func:`gfm_blocks` puts a blank line before and after every
heading and every table, folds runs of blank lines into one, and wraps a paragraph's line
longer than :data:`WIDTH` characters at spaces (a soft break: it renders the same, and a CI job
summary's source stays readable), never where the next line would start another block (a
list, a heading, a quote, a table); fenced code blocks, HTML blocks and indented lines are
kept as they are.
"""

from __future__ import annotations

import re
import textwrap

WIDTH = 120  # characters a paragraph's line holds at most (a word longer than it stays whole)
_HEADING = re.compile(r"^#{1,6}(\s|$)")
_FENCE = re.compile(r"^(```|~~~)")
# what would open another block at the start of a line: never a wrapped line's first word
_OPENS_BLOCK = re.compile(r"^([#>|<=_+-]|\*(\s|$)|```|~~~|\d+[.)](\s|$))")


_CONTAINER = re.compile(r"^(> |[-*+] |\d+[.)] )")  # a quote's or a list item's marker


def wrap(line: str, width: int = WIDTH) -> list[str]:
    """``line`` as lines of at most ``width`` characters where its spaces allow, none of them
    starting a new block; a quote's lines go on with ``> ``, a list item's are indented under
    its text; a line starting with whitespace or ``<`` (HTML) is kept whole."""
    if len(line) <= width or line[:1].isspace() or line.startswith("<"):
        return [line]
    marker = _CONTAINER.match(line)
    lead = marker.group(1) if marker else ""
    more = "> " if lead == "> " else " " * len(lead)
    pieces = textwrap.wrap(
        line[len(lead) :], width - len(lead), break_long_words=False, break_on_hyphens=False
    )
    lines = [pieces[0]]
    for piece in pieces[1:]:
        if _OPENS_BLOCK.match(piece) or len(lines[-1]) + 1 + len(piece) <= width - len(lead):
            lines[-1] += " " + piece  # kept on the line before: it would open a block
        else:
            lines.append(piece)
    return [lead + lines[0], *(more + rest for rest in lines[1:])]


def _kind(line: str) -> str:
    if not line.strip():
        return "blank"
    if _HEADING.match(line):
        return "heading"
    if line.startswith("|"):
        return "table"
    return "text"


def gfm_blocks(markdown: str) -> str:
    """``markdown`` with a blank line around each heading and table, one blank line at most."""
    out: list[str] = []
    fenced = False
    previous = "blank"
    for line in markdown.split("\n"):
        if fenced or _FENCE.match(line):
            if _FENCE.match(line):
                fenced = not fenced
            out.append(line)
            previous = "text"
            continue
        kind = _kind(line)
        if kind == "blank":
            if previous != "blank":
                out.append(line)
            previous = "blank"
            continue
        apart = kind != previous or kind == "heading"  # a table's rows stay together
        if previous != "blank" and apart:
            out.append("")
        out.extend(wrap(line) if kind == "text" else [line])
        previous = kind
    return "\n".join(out)
