"""A cut of escaped Markdown (a table cell, a heading) to a width: never inside a backslash
escape, an entity, a tag, a link or an emoji, a code span closed again, so GitHub
(markdown-it-py) renders the start of the same text and no markup the whole had not."""

from __future__ import annotations

import html
import re

import pytest
import regex
from markdown_it import MarkdownIt

from harness.report.escape import md_escape
from harness.report.md_cut import CUT, cut

# raw text as a model or a server may send it, then escaped as every report value is
HOSTILE = [
    "a|b|c " * 12,
    "<script>alert(1)</script> " * 6,
    "`rm -rf /` and ``two`` ticks " * 5,
    "👩‍👩‍👧‍👦 family 🇫🇷 flag ⚠️ sign e\u0301 accent " * 4,
    "&amp; &lt;b&gt; entities &#x41; " * 6,
    "line one\nline two\nline three " * 5,
    "C:\\path\\to\\file \\x1b[2J \\| " * 6,
    "[link](javascript:alert(1)) ![img](http://x/y.png) **bold** _it_ ~~s~~ " * 3,
    "\x1b[31mred\x1b[0m \u202eevil\u202c \u2028 " * 6,
]
# Markdown the templates make themselves (already inert): code spans, links, line breaks
TEMPLATE_MADE = [
    "see `--allow-dirty-machine` and ``a ` b`` then `x \\| y` " * 3,
    "⚠ xfailed<br>known: mlx-vlm 0.7.10 [link](https://example.org/issue/1) " * 3,
]
CELLS = [md_escape(text) for text in HOSTILE] + TEMPLATE_MADE
_TAG = re.compile(r"<(/?[a-z0-9]+)")


def _cell_html(cell: str) -> str:
    rendered = (
        MarkdownIt("commonmark")
        .enable(["table", "strikethrough"])
        .render(f"| h |\n|---|\n| {cell} |\n")
    )
    match = re.search(r"<td>(.*?)</td>", rendered, re.DOTALL)
    assert match, rendered
    return match.group(1)


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", fragment))


@pytest.mark.parametrize("cell", CELLS, ids=range(len(CELLS)))
def test_a_cut_never_breaks_an_escape_an_entity_a_tag_a_code_span_or_an_emoji(cell: str) -> None:
    whole = _cell_html(cell)
    boundaries = {m.end() for m in regex.finditer(r"\X", cell)}
    for limit in range(8, len(cell), 3):
        short = cut(cell, limit)
        assert len(short) <= limit and short.endswith(CUT), (limit, short)
        kept = short.removesuffix(CUT)
        fence = re.search(r"`+$", kept)  # a code span closed again
        prefix = kept if kept == cell[: len(kept)] else kept[: fence.start() if fence else None]
        assert prefix == cell[: len(prefix)], short  # the cell's start, and the fence
        assert len(prefix) in boundaries | {0}, short  # no emoji cut in two
        assert not re.search(r"(?<!\\)(\\\\)*\\$", kept), short  # no lone backslash at the end
        assert not re.search(r"&[#A-Za-z0-9]*$", kept), short  # no half entity
        assert not re.search(r"<[^>]*$", kept), short  # no half tag
        shown = _cell_html(short)
        assert set(_TAG.findall(shown)) <= set(_TAG.findall(whole)), short  # no new markup
        assert _text(whole).startswith(_text(shown).removesuffix(CUT).rstrip()), short


@pytest.mark.parametrize(
    ("cell", "limit", "short"),
    [
        ("see `--allow-dirty-machine` now", 15, "see `--allow-`…"),  # a span closed again
        ("see `--allow-dirty-machine` now", 7, "see…"),  # not one character of it: dropped
        ("a \\| b \\| c", 5, "a \\|…"),  # an escaped pipe whole
        ("x &lt;script&gt;", 5, "x…"),  # no half entity
        ("one<br>two", 6, "one…"),  # no half <br>
        ("👩‍👩‍👧‍👦👩‍👩‍👧‍👦", 9, "👩‍👩‍👧‍👦…"),  # one family, not a half
        ("short", 5, "short"),
    ],
)
def test_a_cut_keeps_whole_pieces(cell: str, limit: int, short: str) -> None:
    assert cut(cell, limit) == short
