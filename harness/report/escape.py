"""Escaping of untrusted text (model output, reasons, names) for Markdown and plain text.

HTML escaping is jinja2's autoescape; Markdown has no such thing, so the Markdown environment
runs every ``{{ value }}`` through :func:`md_escape` (see ``render.py``) and only values
wrapped in :class:`markupsafe.Markup` (built here, from escaped parts) pass unchanged.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from markupsafe import Markup

_MD_SPECIAL = re.compile(r"([\\|`\[\]*~])")
# GitHub Markdown never takes an underscore inside a word as emphasis (decode_tps stays as it is);
# one at a word's edge can open or close it (__init__), so only those are escaped.
_MD_EDGE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
_WHITESPACE = re.compile(r"\s+")


def md_escape(text: str) -> str:
    """Make ``text`` inert inside a Markdown table cell or paragraph.

    Pipes, backticks, brackets, backslashes, asterisks, tildes and underscores at a word's edge
    get a backslash (no table breaks, code spans, links, images, emphasis or strikethrough),
    ``<`` becomes ``&lt;`` (no raw HTML), control characters are dropped
    and line breaks become ``<br>`` so a cell stays on one line.
    """
    text = _CONTROL.sub("", text)
    text = _MD_SPECIAL.sub(r"\\\1", text)
    text = _MD_EDGE_UNDERSCORE.sub(r"\\_", text)
    text = text.replace("<", "&lt;")
    return _LINE_BREAKS.sub("<br>", text)


def md_finalize(value: object) -> object:
    """jinja2 ``finalize`` for Markdown templates: escape every value not already Markup."""
    if value is None:
        return ""
    if isinstance(value, Markup):
        return value
    return md_escape(str(value))


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
    if _CONTROL.search(url) or any(c.isspace() for c in url):
        return None
    return url


def md_url(url: str) -> Markup:
    """Percent-encode the characters that could end a Markdown link target or a table cell."""
    return Markup(quote(url, safe=":/?#@!$&'*+,;=%~-._"))


def one_line(text: str | None, limit: int = 120) -> str:
    """The first non-empty line of ``text``, whitespace collapsed, cut to ``limit`` chars."""
    if not text:
        return ""
    line = next((ln for ln in _LINE_BREAKS.split(text) if ln.strip()), "")
    line = _WHITESPACE.sub(" ", _CONTROL.sub("", line)).strip()
    if len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return line


def plain(text: str, limit: int | None = None) -> str:
    """Printable single-line text for a terminal (no escapes, no line breaks)."""
    text = _WHITESPACE.sub(" ", _CONTROL.sub("", text)).strip()
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return text


# Characters that act on a terminal or reorder what it shows instead of printing: C0 and C1
# controls (ESC starts ANSI/OSC sequences, 0x9b is a one-byte CSI), DEL, the bidi marks,
# embeddings, overrides and isolates ("Trojan Source"), and the Unicode line/paragraph separators.
_ACTING = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, limit: int | None = None) -> str:
    """Single-line text for a terminal with every acting character shown, not obeyed.

    Unlike :func:`plain` (which drops C0 controls and folds whitespace), each control
    character, ANSI/OSC escape introducer, bidi control and line separator becomes a visible
    escape (``\\x1b``, ``\\x0a`` for a line break, ``\\u202e``), so a person sees that the text
    carried one. The text is then cut to ``limit`` characters (with "…").
    """
    text = _ACTING.sub(_shown, text)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return text
