"""Blank lines where GitHub Markdown needs them, whatever a template left out.

GFM joins a heading to nothing, but a table to the paragraph line right after it (``0 metric
comparison(s) unchanged.`` under a table becomes one more row) and a table line right after a
paragraph to that paragraph. :func:`gfm_blocks` puts a blank line before and after every
heading and every table, folds runs of blank lines into one, and wraps a paragraph's line
longer than :data:`WIDTH` characters at spaces (a soft break: it renders the same, and a CI job
summary's source stays readable), never where the next line would start another block (a
list, a heading, a quote, a table); fenced code blocks, HTML blocks and indented lines are
kept as they are. A heading cannot wrap: one longer than :data:`WIDTH` (a model's long name)
is cut to fit (:func:`harness.report.md_cut.cut`), with a line under it naming the file that
holds it whole.
"""

from __future__ import annotations

import re

from harness.report.md_cut import cut, whole_in_line

WIDTH = 120  # characters a paragraph's line holds at most (a word longer than it stays whole)
_HEADING = re.compile(r"^#{1,6}(\s|$)")
_FENCE = re.compile(r"^(```|~~~)")
# what would open another block at the start of a line: never a wrapped line's first word
_OPENS_BLOCK = re.compile(r"^([#>|<=_+-]|\*(\s|$)|```|~~~|\d+[.)](\s|$))")


_SPACE = re.compile(r"(?<=\S) (?=\S)")  # where a line may break: a lone space between words
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
    units: list[str] = []  # words, each with the words after it that would open a block
    for word in _SPACE.split(line[len(lead) :]):
        if units and _OPENS_BLOCK.match(word):
            units[-1] += " " + word  # "TPOT = (e2e": never a line starting with "="
        else:
            units.append(word)
    lines = [units[0]]
    for unit in units[1:]:
        if len(lines[-1]) + 1 + len(unit) <= width - len(lead):
            lines[-1] += " " + unit
        else:
            lines.append(unit)
    return [lead + lines[0], *(more + rest for rest in lines[1:])]


def _kind(line: str) -> str:
    if not line.strip():
        return "blank"
    if _HEADING.match(line):
        return "heading"
    if line.startswith("|"):
        return "table"
    return "text"


def heading(line: str, whole_in: str, width: int = WIDTH) -> list[str]:
    """A heading line as it fits ``width``: whole, or cut with a line saying where it is whole."""
    if len(line) <= width:
        return [line]
    marks = line.split(" ", 1)[0] + " "
    return [
        marks + cut(line[len(marks) :].strip(), width - len(marks)),
        "",
        whole_in_line("heading", whole_in),
    ]


def gfm_blocks(markdown: str, whole_in: str) -> str:
    """``markdown`` with a blank line around each heading and table, one blank line at most, a
    paragraph's long lines wrapped and a long heading cut (``whole_in``, the HTML file beside
    it, holds it whole)."""
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
        if kind == "heading":
            out.extend(heading(line, whole_in))  # a cut one's note: a paragraph of its own
        else:
            out.extend(wrap(line) if kind == "text" else [line])
        previous = kind
    return "\n".join(out)
