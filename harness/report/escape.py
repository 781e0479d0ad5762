"""Escaping of untrusted text (model output, reasons, names, server answers) for every output.

One function, :func:`harness.core.visible_text.visible` (imported here), decides what an *acting*
character is and how it is shown: C0 and C1 controls, DEL, the bidi marks, embeddings,
overrides and isolates, the Unicode line and paragraph separators and lone surrogates each
become a visible escape (``\\x1b``, ``\\u202e``). Every function here builds on it and only
chooses what a line break becomes where it lands:

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

from harness.core.visible_text import cut as _cut
from harness.core.visible_text import visible

_MD_SPECIAL = re.compile(r"([\\|`\[\]*~])")
# GitHub Markdown never takes an underscore inside a word as emphasis (decode_tps stays as it is);
# one at a word's edge can open or close it (__init__), so only those are escaped.
_MD_EDGE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_WHITESPACE = re.compile(r"\s+")


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
    if type(value) is int or type(value) is float:  # a number carries no acting character
        return str(value)
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
    if type(value) is int or type(value) is float:  # a number carries no acting character
        return str(value)
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
