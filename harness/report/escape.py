"""Escaping of untrusted text (model output, reasons, names, server answers) for every output.

One function, :func:`visible`, decides what an *acting* character is and how it is shown: C0
and C1 controls (ESC starts ANSI/OSC sequences, 0x9b is a one-byte CSI), DEL, the bidi marks,
embeddings, overrides and isolates ("Trojan Source"), the Unicode line and paragraph separators
and lone surrogates each become a visible escape (``\\x1b``, ``\\u202e``), so a reader sees that
the text carried one and no terminal, browser or Markdown viewer obeys it. Every other function
here builds on it and only chooses what a line break becomes where it lands:

- :func:`visible`: one inert line for a terminal, line breaks escaped too (``\\x0a``);
- :func:`plain` and :func:`one_line`: one readable line, line breaks and whitespace folded;
- :func:`md_escape` (``finalize`` of the Markdown templates): line breaks become ``<br>``;
- :func:`html_finalize` (``finalize`` of the HTML templates, before jinja2's autoescape, which
  leaves control and bidi characters alone): line breaks stay (a ``<pre>`` shows them, a cell
  folds them), everything else acting is escaped, in :class:`markupsafe.Markup` values too.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from markupsafe import Markup

# "\r\n" first: one line break, not two. Surrogates only exist in a str unpaired (a JSON
# "\ud800" from a server), and would stop the text from being written or printed.
_ACTING = re.compile(
    "\r\n|[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_LINE_BREAK_CHARS = ("\r\n", "\r", "\n")
_MD_SPECIAL = re.compile(r"([\\|`\[\]*~])")
# GitHub Markdown never takes an underscore inside a word as emphasis (decode_tps stays as it is);
# one at a word's edge can open or close it (__init__), so only those are escaped.
_MD_EDGE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_WHITESPACE = re.compile(r"\s+")


def _escape(char: str) -> str:
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" for c in char)


def _cut(text: str, limit: int | None) -> str:
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

    def shown(match: re.Match[str]) -> str:
        char = match.group()
        if breaks is not None and char in _LINE_BREAK_CHARS:
            return breaks
        if breaks is not None and char == "\t":
            return char
        return _escape(char)

    return _cut(_ACTING.sub(shown, text), limit)


def plain(text: str, limit: int | None = None) -> str:
    """One readable line for a terminal: line breaks and runs of whitespace become one space,
    every other acting character is shown as :func:`visible` shows it, then cut to ``limit``."""
    return _cut(_WHITESPACE.sub(" ", visible(text, breaks=" ")).strip(), limit)


def one_line(text: str | None, limit: int = 120) -> str:
    """The first non-empty line of ``text`` as :func:`plain` shows it, cut to ``limit`` chars."""
    if not text:
        return ""
    lines = (plain(line) for line in visible(text, breaks="\n").split("\n"))
    line = next((line for line in lines if line), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def md_escape(text: str) -> str:
    """Make ``text`` inert inside a Markdown table cell or paragraph.

    Acting characters become visible escapes (:func:`visible`); pipes, backticks, brackets,
    backslashes, asterisks, tildes and underscores at a word's edge get a backslash (no table
    breaks, code spans, links, images, emphasis or strikethrough), ``<`` becomes ``&lt;`` (no
    raw HTML) and line breaks become ``<br>`` so a cell stays on one line.
    """
    text = visible(text, breaks="\n")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    text = _MD_EDGE_UNDERSCORE.sub(r"\\_", text)
    text = text.replace("<", "&lt;")
    return text.replace("\n", "<br>")


def md_finalize(value: object) -> object:
    """jinja2 ``finalize`` for Markdown templates: escape every value not already Markup; a
    Markup value (built here from escaped parts) still has its acting characters shown."""
    if value is None:
        return ""
    if isinstance(value, Markup):
        return Markup(visible(str(value), breaks="\n"))
    return md_escape(str(value))


def html_finalize(value: object) -> object:
    """jinja2 ``finalize`` for HTML templates: acting characters shown, line breaks kept.

    jinja2's autoescape then escapes ``<``, ``&`` and quotes of the result (a str); a value
    that is already HTML (Markup: an inline chart) is escaped here too and stays Markup. None
    stays None (shown as jinja2 shows it).
    """
    if value is None:
        return value
    if hasattr(value, "__html__"):
        return Markup(visible(str(value.__html__()), breaks="\n"))
    return visible(str(value), breaks="\n")


def safe_link(url: str | None) -> str | None:
    """``url`` when it is an http(s) link with a host, else None (no javascript:, data:...)."""
    if not url:
        return None
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    if visible(url) != url or any(c.isspace() for c in url):
        return None
    return url


def md_url(url: str) -> Markup:
    """Percent-encode the characters that could end a Markdown link target or a table cell."""
    return Markup(quote(url, safe=":/?#@!$&'*+,;=%~-._"))
