"""Escaped Markdown cut to a width where it still renders as the same text, and the line that
says where the whole text is.

The text is Markdown the report's escaper already made inert (backslash escapes, entities, code
spans, ``<br>``, links the templates made): :func:`cut` never ends inside a backslash escape,
an entity, an HTML tag, a link or a grapheme cluster (an emoji with its modifiers), and a code
span cut short is closed again, so what remains shows a start of the same text, never markup.
Lengths are Python ``len()`` characters.
"""

from __future__ import annotations

import re

import regex

CUT = "…"
# what a cut must keep whole: a backslash escape, an entity, an HTML tag (<br>), a link, a run
# of backticks (a code span's edge), one grapheme cluster (a base character with its marks)
_TOKEN = regex.compile(
    r"\\.|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);|<[^<>\n]*>"
    r"|\[[^\]\n]*\]\([^)\s]*\)|`+|\X",
    regex.DOTALL,
)
_BACKTICKS = re.compile(r"`+")
_CODE_TOKEN = regex.compile(r"\\\||`+|\X", regex.DOTALL)  # inside a code span: \| stays whole


def whole_in_line(what: str, whole_in: str) -> str:
    """The line under a cut ``what`` (a cell, a heading): which file holds its whole text."""
    return f"A {what} ending in {CUT} is cut to fit; {whole_in} holds its whole text."


def _segments(cell: str) -> list[str]:
    """``cell`` as the pieces a cut keeps whole or drops: escapes, entities, tags, links,
    grapheme clusters, and code spans (from a run of backticks to the next run as long)."""
    pieces: list[str] = []
    index = 0
    while index < len(cell):
        token = _TOKEN.match(cell, index)
        text = token.group() if token else cell[index]
        if text.startswith("`"):
            close = next(
                (m for m in _BACKTICKS.finditer(cell, index + len(text)) if m.group() == text),
                None,
            )
            if close is not None:
                text = cell[index : close.end()]
        pieces.append(text)
        index += len(text)
    return pieces


def cut(cell: str, limit: int) -> str:
    """``cell`` in at most ``limit`` characters, ending in ``…`` when it was longer; whole
    escapes, entities, tags, links and grapheme clusters only, a code span closed again."""
    if len(cell) <= limit:
        return cell
    kept = ""
    for piece in _segments(cell):
        room = limit - len(CUT) - len(kept)
        if len(piece) <= room:
            kept += piece
            continue
        fence = _BACKTICKS.match(piece)
        if fence and len(piece) > 2 * len(fence.group()):
            kept += _code_span(piece[len(fence.group()) : -len(fence.group())], fence.group(), room)
        break
    return kept.rstrip() + CUT


def _code_span(content: str, fence: str, room: int) -> str:
    """A code span of ``content`` cut to ``room`` characters and closed again; empty when not
    one character of it fits."""
    kept = ""
    for token in _CODE_TOKEN.finditer(content):
        if len(fence) * 2 + len(kept) + len(token.group()) > room:
            break
        kept += token.group()
    if not kept.strip() or kept.strip("`") != kept:
        return ""  # nothing, or a backtick at the edge (it would join the fence)
    return fence + kept + fence
