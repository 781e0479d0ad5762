"""Blank lines where GitHub Markdown needs them, whatever a template left out.

GFM joins a heading to nothing, but a table to the paragraph line right after it (``0 metric
comparison(s) unchanged.`` under a table becomes one more row) and a table line right after a
paragraph to that paragraph. :func:`gfm_blocks` puts a blank line before and after every
heading and every table, and folds runs of blank lines into one, outside fenced code blocks
(whose text is kept as it is).
"""

from __future__ import annotations

import re

_HEADING = re.compile(r"^#{1,6}(\s|$)")
_FENCE = re.compile(r"^(```|~~~)")


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
        out.append(line)
        previous = kind
    return "\n".join(out)
