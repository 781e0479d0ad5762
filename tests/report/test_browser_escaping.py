"""Model text in reports never runs: a report whose every free-text field carries a hostile
payload, opened in a real headless Chromium, keeps its title, its own markup and its own
scripts, and makes no request to the loopback beacon the payloads point at.

Each payload sets the title to ``pwned-N`` (N: its row below) or loads ``{beacon}/...``; the
page is judged against its twin, the same run with inert words, rendered the same way, so the
report's own elements and inline scripts are known exactly. Negative controls switch escaping
off and show every check firing. The API contracts evidence also carries characters that act
instead of printing (ESC sequences, a bidi override, NUL...): the page shows them as escapes.
Set ``HARNESS_BROWSER_SCREENSHOT=/path/shot.png`` to keep a screenshot of the hostile report.
Chromium comes from ``make system-deps`` (Debian's ``chromium``); without it the browser tests
skip locally and fail under CI.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import pytest
from acting_characters import acting_in
from beacon_server import BeaconServer
from headless_chromium import Chromium, find_chromium, is_ci
from hostile_run import EVIDENCE_SHOWN, RUN_ID, hostile_runs
from markup_facts import DomFacts, dom_facts, extra_elements, markdown_markup

from harness.core.types import RunRecord
from harness.report import ReportPaths, default_sections, render
from harness.report.comparison import section
from harness.report.render import render_markdown
from harness.report.sections import Section
from harness.results.compare import compare_runs

MISSING_CI = "chromium not found: `make system-deps` should have installed it (DEBIAN_PACKAGES)"
MISSING = "chromium not found: install Debian's chromium (`make system-deps`) for this test"
TITLE = f"mlx-harness report {RUN_ID}"
SECTION_ERROR = "section could not be built"  # harness/report/templates/section_error.html.j2
PWN = "document.title='pwned-{n}'"

# (what it tries, the payload): {n} is the row number, {beacon} the beacon server's URL.
PAYLOADS: tuple[tuple[str, str], ...] = (
    ("script element", f"<script>{PWN}</script>"),
    ("script, upper case", f"<SCRIPT>{PWN}</SCRIPT>"),
    ("external script", "<script src={beacon}/script-{n}.js></script>"),
    ("img onerror", f'<img src=x onerror="{PWN}">'),
    ("img to the beacon", '<img src="{beacon}/img-{n}">'),
    ("img srcset", '<img srcset="{beacon}/srcset-{n} 1x">'),
    ("image alias", f"<image src=x onerror={PWN}>"),
    ("attribute breakout, double quote", f'"><svg onload="{PWN}">'),
    ("attribute breakout, single quote", f"'><svg/onload={PWN}>"),
    ("event attribute, no tag", f'" onmouseover="{PWN}" x="'),
    ("autofocus onfocus", f"' autofocus onfocus='{PWN}' x='"),
    ("textarea breakout", f"</textarea><script>{PWN}</script>"),
    ("title breakout", f"</title><script>{PWN}</script>"),
    ("pre breakout", f"</pre><img src=x onerror={PWN}>"),
    ("table breakout", f"</td></tr></table><img src=x onerror={PWN}>"),
    ("style breakout", f"</style><script>{PWN}</script>"),
    ("script breakout", f"</script><script>{PWN}</script>"),
    ("javascript: link", f'<a href="javascript:{PWN}">click</a>'),
    ("bare javascript: URL", f"javascript:{PWN}"),
    ("data: URL", f"data:text/html,<script>{PWN}</script>"),
    ("iframe", '<iframe src="{beacon}/iframe-{n}"></iframe>'),
    ("object", '<object data="{beacon}/object-{n}"></object>'),
    ("embed", '<embed src="{beacon}/embed-{n}">'),
    ("meta refresh", '<meta http-equiv="refresh" content="0;url={beacon}/refresh-{n}">'),
    ("base href", '<base href="{beacon}/base-{n}/">'),
    ("stylesheet link", '<link rel=stylesheet href="{beacon}/link-{n}.css">'),
    ("preload", '<link rel=preload as=image href="{beacon}/preload-{n}">'),
    ("style element url()", "<style>body{background:url({beacon}/css-{n})}</style>"),
    ("style attribute url()", '<div style="background:url({beacon}/style-{n})">x</div>'),
    ("CSS @import text", "@import url({beacon}/import-{n});"),
    ("svg use", '<svg><use href="{beacon}/use-{n}#x"/></svg>'),
    ("svg style mXSS", f"<svg><style><img src=x onerror={PWN}></style></svg>"),
    ("noscript mXSS", f'<noscript><p title="</noscript><img src=x onerror={PWN}>">'),
    ("details ontoggle", f"<details open ontoggle={PWN}>x</details>"),
    ("body onload", f"<body onload={PWN}>"),
    ("audio onerror", f"<audio src=x onerror={PWN}>"),
    ("video source onerror", f"<video><source onerror={PWN}></video>"),
    ("marquee onstart", f"<marquee onstart={PWN}>x</marquee>"),
    ("form to the beacon", '<form action="{beacon}/form-{n}"><button>go</button></form>'),
    ("comment opener", f"<!-- --><script>{PWN}</script>"),
    ("CDATA", f"<![CDATA[<script>{PWN}</script>]]>"),
    ("nested filter evasion", f"<scr<script>ipt>{PWN}</scr</script>ipt>"),
    ("double-encoded", f"&lt;script&gt;{PWN}&lt;/script&gt;"),
    ("numeric entities", "&#60;img src=x onerror=&#34;document.title='pwned-{n}'&#34;&#62;"),
    ("jinja expression", "{{ 7*7 }} {{ run.run_id }} {{ self.__init__.__globals__ }}"),
    ("jinja statement", "{% for x in range(3) %}{{ x }}{% endfor %}{# c #}"),
    ("markdown link", "[click here]({beacon}/md-link-{n})"),
    ("markdown image", "![logo]({beacon}/md-img-{n})"),
    ("markdown autolink", "<{beacon}/autolink-{n}>"),
    ("markdown reference", "[x]: {beacon}/md-ref-{n}"),
    ("markdown html block", "<details><summary>s</summary><img src={beacon}/md-html-{n}>"),
    ("markdown table breakout", f"a | b |\n|---|---|\n| <img src=x onerror={PWN}> |"),
    ("markdown code span breakout", f"` <script>{PWN}</script> `"),
    ("emoji around a script", f"🧨 <script>{PWN}</script> 🎉"),
)


def payload_texts(beacon: str, rows: Collection[str] | None = None) -> list[str]:
    """The payloads (those named in ``rows``, else all) pointing at ``beacon``."""
    return [
        p.replace("{n}", str(n)).replace("{beacon}", beacon)
        for n, (name, p) in _rows()
        if rows is None or name in rows
    ]


def inert_texts() -> list[str]:
    """One word per payload line: Markdown turns line breaks into ``<br>`` in both reports."""
    return ["\n".join([f"inert{n}"] * (p.count("\n") + 1)) for n, (_, p) in _rows()]


def _rows() -> Iterator[tuple[int, tuple[str, str]]]:
    return enumerate(PAYLOADS, start=1)


def render_report(texts: Sequence[str], workdir: Path) -> ReportPaths:
    """Render as a run with ``--baseline`` does: header, comparison, then the rest."""
    current, sections = _with_baseline(texts, workdir)
    return render(current, workdir / "current", sections)


def render_markdown_file(texts: Sequence[str], workdir: Path) -> Path:
    """:func:`render_report`'s report.md alone (its HTML, charts and all, is most of the cost)."""
    current, sections = _with_baseline(texts, workdir)
    out = workdir / "current" / "report.md"
    out.write_text(render_markdown(current, sections))
    return out


def _with_baseline(texts: Sequence[str], workdir: Path) -> tuple[RunRecord, tuple[Section, ...]]:
    baseline, current = hostile_runs(texts, workdir)
    defaults = default_sections()
    return current, (defaults[0], section(compare_runs(baseline, current)), *defaults[1:])


@pytest.fixture(scope="module")
def chromium() -> Chromium:
    binary = find_chromium()
    if binary is None:
        if is_ci():
            pytest.fail(MISSING_CI, pytrace=False)
        pytest.skip(MISSING)
    return Chromium(binary)


@pytest.fixture(scope="module")
def beacon() -> Iterator[BeaconServer]:
    server = BeaconServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def hostile(beacon: BeaconServer, tmp_path_factory: pytest.TempPathFactory) -> ReportPaths:
    return render_report(payload_texts(beacon.url), tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def twin_report(tmp_path_factory: pytest.TempPathFactory) -> ReportPaths:
    """The same run with every payload an inert word: the report's own markup."""
    return render_report(inert_texts(), tmp_path_factory.mktemp("twin"))


@pytest.fixture(scope="module")
def twin(chromium: Chromium, twin_report: ReportPaths) -> DomFacts:
    return dom_facts(chromium.dump_dom(twin_report.html.as_uri()))


@dataclass(frozen=True)
class Visit:
    facts: DomFacts
    texts: tuple[str, ...]
    beacon: BeaconServer


def visit(
    chromium: Chromium,
    report: ReportPaths,
    texts: Sequence[str],
    beacon: BeaconServer,
    screenshot: Path | None = None,
) -> Visit:
    """Open the report while the beacon serves; its count is final when this returns."""
    with beacon:
        facts = dom_facts(chromium.dump_dom(report.html.as_uri()))
        if screenshot is not None:
            chromium.screenshot(report.html.as_uri(), screenshot)
    return Visit(facts, tuple(texts), beacon)


def judge(seen: Visit, twin: DomFacts) -> dict[str, list[str]]:
    """Problems by check; an empty list for each check that holds."""
    page, beacon = seen.facts, seen.beacon
    urls = [(t, n, v) for t, n, v in page.urls() if not v.startswith(("#", "http:", "https:"))]
    urls += [(t, n, v) for t, n, v in page.urls() if beacon.host_port in v]
    return {
        "title": [] if page.title == TITLE else [f"title is {page.title!r}, not {TITLE!r}"],
        "handlers": page.event_handlers(),
        "scripts": [] if page.scripts == twin.scripts else [f"scripts: {page.scripts!r}"],
        "elements": extra_elements(page, twin),
        "urls": [f"{t} {n}={v!r}" for t, n, v in urls],
        "beacon": [beacon.summary()] if beacon.connections else [],
        "shown": [t for t in seen.texts if not page.shows(t)],
        "sections": [SECTION_ERROR] if page.shows(SECTION_ERROR) else [],
    }


def test_twin_is_the_report_itself(twin: DomFacts) -> None:
    """Every section is there and built, so every field above reached the page."""
    keys = {v for tag, name, v in twin.attributes if tag == "section" and name == "id"}
    assert keys == {"comparison", *(s.key for s in default_sections())}
    assert not twin.shows(SECTION_ERROR)
    assert twin.title == TITLE
    assert twin.scripts, "the report's own inline script (column sorting) is missing"
    assert all(not attrs for attrs, _ in twin.scripts)  # inline only, no src
    assert twin.event_handlers() == []
    assert all(twin.shows(t) for t in inert_texts())


@pytest.fixture(scope="module")
def hostile_visit(chromium: Chromium, hostile: ReportPaths, beacon: BeaconServer) -> Visit:
    """The hostile report opened once in Chromium (the page is the same for every check)."""
    shot = os.environ.get("HARNESS_BROWSER_SCREENSHOT")
    texts = payload_texts(beacon.url)
    return visit(chromium, hostile, texts, beacon, Path(shot) if shot else None)


def test_payloads_stay_text_in_chromium(twin: DomFacts, hostile_visit: Visit) -> None:
    seen = hostile_visit
    problems = {check: found for check, found in judge(seen, twin).items() if found}
    assert problems == {}
    assert seen.facts.elements == twin.elements  # not one element or attribute more or less


# Enough rows to trip every check when escaping is off, few enough to stay quick.
CONTROL_ROWS = ("script element", "img onerror", "img to the beacon", "javascript: link")


def autoescape_off(env: jinja2.Environment) -> None:
    env.autoescape = False


def one_safe_filter(env: jinja2.Environment) -> None:
    """One value marked ``|safe`` in a scratch copy of one partial: the failure reason."""
    assert env.loader is not None
    name = "failures.html.j2"
    source = env.loader.get_source(env, name)[0]
    holed = source.replace("{{ p.reason }}", "{{ p.reason|safe }}")
    assert holed != source, f"{name} no longer shows {{{{ p.reason }}}}: update this control"
    env.loader = jinja2.ChoiceLoader([jinja2.DictLoader({name: holed}), env.loader])


@pytest.mark.parametrize("hole", [autoescape_off, one_safe_filter], ids=lambda f: f.__name__)
@pytest.mark.usefixtures("chartless")
def test_every_check_fires_when_escaping_has_a_hole(
    chromium: Chromium,
    twin: DomFacts,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hole: Callable[[jinja2.Environment], None],
) -> None:
    module = importlib.import_module("harness.report.render")
    original: Callable[..., jinja2.Environment] = module._environment

    def holed(kind: str, *sections: Any) -> jinja2.Environment:
        env = original(kind, *sections)
        if kind == "html":
            hole(env)
        return env

    monkeypatch.setattr(module, "_environment", holed)
    control = BeaconServer()
    try:
        texts = payload_texts(control.url, CONTROL_ROWS)
        seen = visit(chromium, render_report(texts, tmp_path), texts, control)
    finally:
        control.close()
    problems = judge(seen, twin)
    silent = [c for c, found in problems.items() if not found and c not in ("shown", "sections")]
    assert silent == [], f"checks that saw nothing with escaping off: {silent}"
    assert problems["title"][0].startswith("title is 'pwned-")


def markdown_extra(hostile: Path, twin: Path) -> list[str]:
    """Raw HTML starts and link syntax the hostile Markdown has beyond its twin's."""
    extra = markdown_markup(hostile.read_text()) - markdown_markup(twin.read_text())
    return [f"{token} x{count}" for token, count in sorted(extra.items())]


def render_whole(texts: Sequence[str], workdir: Path) -> Path:
    """:func:`render_markdown_file` with every table and heading whole (not split or cut to
    fit 120 characters): the escaper's own Markdown, laid out alike for the payloads and their
    twin."""
    with pytest.MonkeyPatch.context() as patch:
        render_module = importlib.import_module("harness.report.render")
        patch.setattr(render_module, "fit_tables", lambda markdown, whole_in: markdown)
        blocks = importlib.import_module("harness.report.md_blocks")
        patch.setattr(blocks, "heading", lambda line, whole_in: [line])
        return render_markdown_file(texts, workdir)


def test_markdown_has_no_raw_markup_from_payloads(
    hostile: ReportPaths, beacon: BeaconServer, tmp_path: Path
) -> None:
    whole = render_whole(payload_texts(beacon.url), tmp_path / "hostile")
    assert markdown_extra(whole, render_whole(inert_texts(), tmp_path / "twin")) == []
    # split into column groups and cut to fit (report.md as written): no markup of its own
    fitted = set(markdown_markup(hostile.md.read_text()))
    assert fitted <= set(markdown_markup(whole.read_text()))


def test_markdown_check_fires_when_escaping_is_off(
    twin_report: ReportPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = importlib.import_module("harness.report.render")
    monkeypatch.setattr(module, "md_finalize", lambda value: "" if value is None else value)
    texts = payload_texts("http://127.0.0.1:9", ("script element", "markdown link"))
    found = markdown_extra(render_markdown_file(texts, tmp_path), twin_report.md)
    assert any(token.startswith("<script") for token in found), found
    assert any(token.startswith("](") for token in found), found


def acting_on_page(page: DomFacts) -> list[str]:
    """Raw acting characters in the page's text and attribute values (line feeds and tabs lay
    text out)."""
    values = [*page.texts, *(v for _, _, v in page.attributes)]
    return [hit for value in values for hit in acting_in(value, "\n\t")]


def test_evidence_shows_acting_characters_as_escapes(hostile_visit: Visit) -> None:
    """The evidence block keeps its line break and shows ``\\x1b[2J``, ``\\u202e``... as text."""
    page = hostile_visit.facts
    assert page.shows("\n" + EVIDENCE_SHOWN)
    assert acting_on_page(page) == []


@pytest.mark.usefixtures("chartless")
def test_acting_characters_reach_the_page_when_the_escaper_is_off(
    chromium: Chromium, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Negative control: with autoescape alone, ESC and the bidi override reach the DOM."""
    module = importlib.import_module("harness.report.render")
    monkeypatch.setattr(module, "html_finalize", lambda value: value)
    report = render_report(["inert"], tmp_path)
    page = dom_facts(chromium.dump_dom(report.html.as_uri()))
    hits = " ".join(acting_on_page(page))
    assert "U+001B" in hits and "U+202E" in hits and "U+2066" in hits
    assert not page.shows(EVIDENCE_SHOWN)
