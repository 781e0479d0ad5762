"""What live markup a document holds: the elements, attributes, scripts and text of an HTML
DOM (as Chromium serialized it), and the raw HTML and link syntax of a Markdown file.

A report with hostile text is judged against its *twin*: the same run with every payload
replaced by an inert word. Escaping holds when the hostile document has exactly the twin's
markup (the report's own), and the payloads only as text.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from html.parser import HTMLParser

# Attributes that make a browser fetch or run something, whatever the element.
URL_ATTRIBUTES = frozenset(
    {"href", "src", "srcset", "action", "formaction", "data", "poster", "background", "ping"}
)


@dataclass(frozen=True)
class Element:
    tag: str
    attributes: tuple[str, ...]  # names, sorted

    def __str__(self) -> str:
        return f"<{self.tag}{''.join(' ' + a for a in self.attributes)}>"


@dataclass(frozen=True)
class DomFacts:
    title: str
    elements: Counter[Element]
    scripts: tuple[tuple[tuple[tuple[str, str | None], ...], str], ...]  # (attributes, code)
    attributes: tuple[tuple[str, str, str], ...]  # (tag, name, value), every one
    texts: tuple[str, ...]  # each text run, entities decoded

    def event_handlers(self) -> list[str]:
        """``tag.onerror="..."`` for every on* attribute: the report itself has none."""
        return [f"{t}.{n}={v!r}" for t, n, v in self.attributes if n.startswith("on")]

    def urls(self) -> list[tuple[str, str, str]]:
        return [(t, n, v) for t, n, v in self.attributes if n in URL_ATTRIBUTES]

    def shows(self, text: str) -> bool:
        """``text`` is inert text of the page: inside one text run or one attribute value."""
        return any(text in t for t in self.texts) or any(text in v for _, _, v in self.attributes)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: Counter[Element] = Counter()
        self.scripts: list[tuple[tuple[tuple[str, str | None], ...], str]] = []
        self.attributes: list[tuple[str, str, str]] = []
        self.texts: list[str] = []
        self.title: list[str] = []
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements[Element(tag, tuple(sorted(name for name, _ in attrs)))] += 1
        self.attributes += [(tag, name, value or "") for name, value in attrs]
        if tag == "script":
            self.scripts.append((tuple(attrs), ""))
        self._open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self._open.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag) :]

    def handle_data(self, data: str) -> None:
        current = self._open[-1] if self._open else ""
        if current == "script" and self.scripts:
            attrs, code = self.scripts[-1]
            self.scripts[-1] = (attrs, code + data)
        elif current == "title":
            self.title.append(data)
        self.texts.append(data)


def dom_facts(html: str) -> DomFacts:
    collector = _Collector()
    collector.feed(html)
    collector.close()
    return DomFacts(
        title="".join(collector.title).strip(),
        elements=collector.elements,
        scripts=tuple(collector.scripts),
        attributes=tuple(collector.attributes),
        texts=tuple(collector.texts),
    )


def extra_elements(hostile: DomFacts, twin: DomFacts) -> list[str]:
    """Elements (tag and attribute names) the hostile page has more of than its twin."""
    extra = hostile.elements - twin.elements
    return [f"{element} x{count}" for element, count in sorted(extra.items(), key=str)]


# Markdown: code spans and fences show their content literally, so they are left out first.
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE_SPAN = re.compile(r"(?<![\\`])(`+)(?!`)(.+?)(?<![\\`])\1(?!`)", re.S)
# Raw HTML (a tag, a comment, a declaration) and autolinks all start with an unescaped "<".
_RAW_HTML = re.compile(r"<(/?[A-Za-z][A-Za-z0-9-]*|!--|![A-Za-z]|\?)")
# Links and images: "](" or "][" after an unescaped "]"; a reference definition "[x]: url".
_LINK = re.compile(r"(?<!\\)\][(\[]")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]*(?<!\\)\]:", re.M)


def markdown_outside_code(markdown: str) -> str:
    return _CODE_SPAN.sub("", _FENCE.sub("", markdown))


def markdown_markup(markdown: str) -> Counter[str]:
    """Every raw HTML start (``<script``, ``<br``, ``<!--``) and link syntax outside code."""
    text = markdown_outside_code(markdown)
    found: Counter[str] = Counter(m.group(0).lower() for m in _RAW_HTML.finditer(text))
    found.update(m.group(0) for m in _LINK.finditer(text))
    found.update("[reference]:" for _ in _REFERENCE.finditer(text))
    return found
