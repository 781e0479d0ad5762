"""The one escaper of untrusted text: what an *acting* character is, and how it is shown.

C0 and C1 controls (ESC starts ANSI/OSC sequences, 0x9b is a one-byte CSI), DEL, the bidi
marks, embeddings, overrides and isolates ("Trojan Source"), the Unicode line and paragraph
separators and lone surrogates each become a visible escape (``\\x1b``, ``\\u202e``), so a
reader sees that the text carried one and no terminal, browser or Markdown viewer obeys it.
Every output builds on :func:`visible`: the report's renderers (:mod:`harness.report.escape`),
suite errors, printed paths and the HTTP client's reasons. It lives in the base layer so that
each layer can use it.
"""

from __future__ import annotations

import re

# "\r\n" first: one line break, not two. Surrogates only exist in a str unpaired (a JSON
# "\ud800" from a server), and would stop the text from being written or printed.
_ACTING = re.compile(
    "\r\n|[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_LINE_BREAK_CHARS = ("\r\n", "\r", "\n")
# The acting characters but a tab and a line feed: what ``breaks="\n"`` changes (it keeps those
# two as they are), so a page of lines carrying no other is returned as it is, not substituted.
_ACTING_BUT_TAB_AND_LF = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def escape_char(char: str) -> str:
    """``\\x1b`` for a character below U+0100, ``\\u202e`` above (each of ``\\r\\n``)."""
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" for c in char)


def cut(text: str, limit: int | None) -> str:
    """``text`` cut to ``limit`` characters, the cut marked with "…" (None: no limit)."""
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 0)] + "…"
    return text


def visible(text: str, limit: int | None = None, *, breaks: str | None = None) -> str:
    """``text`` with every acting character shown, not obeyed: the escaper every output builds on.

    Each control character, ANSI/OSC escape introducer, bidi control, line or paragraph
    separator and lone surrogate becomes a visible escape (``\\x1b``, ``\\u202e``); backslashes
    already there are kept. ``breaks`` says what a line break (``\\r\\n``, ``\\r`` or ``\\n``)
    becomes: None (the default) escapes it like the rest (``\\x0a``, one inert line); a string
    replaces each with it (``"\\n"`` keeps the lines of a multi-line block, ``" "`` folds them)
    and keeps tabs, which only lay text out. The text is then cut to ``limit`` characters
    (with "…"), counted on what is shown.
    """

    if _ACTING.search(text) is None:  # most text carries nothing to show: no substitution
        return cut(text, limit)
    if breaks == "\n" and _ACTING_BUT_TAB_AND_LF.search(text) is None:  # lines kept as lines
        return cut(text, limit)

    def shown(match: re.Match[str]) -> str:
        char = match.group()
        if breaks is not None and char in _LINE_BREAK_CHARS:
            return breaks
        if breaks is not None and char == "\t":
            return char
        return escape_char(char)

    return cut(_ACTING.sub(shown, text), limit)
