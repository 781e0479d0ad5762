"""GitHub Markdown tables that fit a line width: split over column groups, long cells cut.

A CI job summary shows report.md's source lines; a table row wider than :data:`WIDTH`
characters runs off it. :func:`fit_tables` rewrites each such table (a run of ``|`` lines whose
second line is a delimiter row, outside fenced code) as several tables over groups of its
columns. Each group repeats the table's key columns: the first column, and the ones after it
up to the first that, with those before it, tells the rows apart (as long as they take at most
two thirds of the width). The other columns are packed into groups in their order, as many as fit.
A cell that fits no group (a reason, a request) is cut to fit, ending in ``…``, and a line
under the table says which HTML file holds it whole.

The cut (:func:`harness.report.md_cut.cut`) never breaks an escape, an entity, a tag, a code
span or an emoji: what remains renders as the start of the same text, never as markup.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.report.md_cut import cut, whole_in_line

WIDTH = 120  # characters a table's line holds at most
CONTINUED = "Same rows, more columns:"
_FENCE = re.compile(r"^(```|~~~)")
_DELIMITER = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")


def _cells(line: str) -> list[str]:
    """A table row's cells, split at the pipes no backslash escapes (as GFM splits them)."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    if "\\" not in body:  # no escaped pipe: every pipe splits (most rows)
        *cells, rest = body.split("|")
        return [cell.strip() for cell in cells] + ([rest.strip()] if rest.strip() else [])
    cells, current, index = [], "", 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            current += body[index : index + 2]
            index += 2
            continue
        if char == "|":
            cells.append(current.strip())
            current = ""
        else:
            current += char
        index += 1
    if current.strip():
        cells.append(current.strip())
    return cells


def _line(cells: Sequence[str]) -> str:
    return "|" + "".join(f" {cell} |" for cell in cells)


def _width(lengths: Sequence[Sequence[int]], columns: Sequence[int]) -> int:
    """The widest line over ``columns`` of the rows whose cells' lengths ``lengths`` holds,
    a list a column: ``| a | b |`` is 1 character, then 3 and the cell's for each cell."""
    widest = max(map(sum, zip(*(lengths[c] for c in columns), strict=True)))
    return 1 + 3 * len(columns) + widest


def _key_room(width: int) -> int:
    """What the key columns' line may take: the rest is for the other columns."""
    return width * 2 // 3


def _key_caps(widths: list[int], width: int) -> list[int]:
    """The key columns' widths within :func:`_key_room`: the widest one cut first."""
    caps = list(widths)
    while len(_line([""] * len(caps))) + sum(caps) > _key_room(width) and max(caps) > 8:
        caps[caps.index(max(caps))] -= 1
    return caps


def _keys(header: list[str], body: list[list[str]], width: int) -> int:
    """How many leading columns name a row: the first, and more until the rows differ, in at
    most two thirds of the width (:func:`_key_room`) and leaving one column to show."""
    count = 1
    while count < len(header) - 1:
        names = [tuple(row[:count]) for row in body]
        if len(set(names)) == len(names):
            break
        if len(_line([""] * (count + 1))) + sum(
            max(len(row[c]) for row in [header, *body]) for c in range(count + 1)
        ) > _key_room(width):
            break
        count += 1
    return count


def _fit(lines: list[str], width: int) -> tuple[list[list[str]], bool]:
    """The tables (as lines) that hold ``lines``' table within ``width``; whether a cell was cut."""
    if max(len(line) for line in lines) <= width:
        return [lines], False
    header = _cells(lines[0])
    size = len(header)
    rows = [(_cells(line) + [""] * size)[:size] for line in lines]
    delimiter, body = rows[1], [rows[0], *rows[2:]]
    if size == 1:
        cap = width - len(_line([""]))
        fitted = [[cut(cell, cap) for cell in row] for row in body]
        was_cut = fitted != body
        return [_lines(fitted, delimiter, range(size))] if was_cut else [lines], was_cut
    keys = _keys(header, body[1:], width)
    caps = _key_caps([max(len(row[c]) for row in body) for c in range(keys)], width)
    fitted = [list(row) for row in body]
    for row in fitted:
        for c in range(keys):
            if len(row[c]) > caps[c]:
                row[c] = cut(row[c], caps[c])
    lengths = [[len(row[c]) for row in fitted] for c in range(size)]  # a list a column
    key_columns = list(range(keys))
    room = width - _width(lengths, key_columns)
    groups: list[list[int]] = []
    for column in range(keys, size):
        if _width(lengths, [column]) - 1 > room:  # its " cell |" fits beside no keys: cut
            for row in fitted:
                row[column] = cut(row[column], room - 3)
            lengths[column] = [len(row[column]) for row in fitted]
        if groups and _width(lengths, key_columns + groups[-1] + [column]) <= width:
            groups[-1].append(column)
        else:
            groups.append([column])
    was_cut = fitted != body
    return [_lines(fitted, delimiter, key_columns + group) for group in groups], was_cut


def _lines(body: list[list[str]], delimiter: list[str], columns: Sequence[int]) -> list[str]:
    header, *rows = body
    return [
        _line([header[c] for c in columns]),
        "|" + "".join(f"{delimiter[c]}|" for c in columns),
        *(_line([row[c] for c in columns]) for row in rows),
    ]


def fit_tables(markdown: str, whole_in: str, width: int = WIDTH) -> str:
    """``markdown`` with every table at most ``width`` characters a line: split over column
    groups (the key columns repeated), a cell that fits none cut with ``…``, and then a line
    saying ``whole_in`` (the HTML file beside it) holds the whole text."""
    out: list[str] = []
    lines = markdown.split("\n")
    fenced, index = False, 0
    while index < len(lines):
        line = lines[index]
        if _FENCE.match(line):
            fenced = not fenced
        if fenced or not line.startswith("|"):
            out.append(line)
            index += 1
            continue
        end = index
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        table = lines[index:end]
        index = end
        if len(table) < 2 or not _DELIMITER.match(table[1]):
            out.extend(table)  # no table: kept as it is
            continue
        groups, was_cut = _fit(table, width)
        for number, group in enumerate(groups):
            out.extend(["", CONTINUED, ""] if number else [])
            out.extend(group)
        if was_cut:
            out.extend(["", whole_in_line("cell", whole_in), ""])
    return "\n".join(out)
