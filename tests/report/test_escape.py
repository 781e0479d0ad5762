"""One escaper for every output: each acting character, through HTML, Markdown, the terminal and
the SVG charts, is shown as a visible escape, never obeyed and never dropped; a run whose every
untrusted field (model output, reasons, evidence, model names, server answers) carries them
leaves none raw in report.html, report.md, the terminal summary or the comparison lines."""

from __future__ import annotations

import html
import importlib
from collections.abc import Callable
from pathlib import Path

import pytest
from acting_characters import ACTING, acting_in, acting_in_outputs, assert_no_acting_characters
from hostile_run import EVIDENCE_SHOWN, hostile_runs
from markupsafe import Markup

from harness.cli.run import case_line
from harness.core.types import RunRecord
from harness.report import default_sections, render, terminal_summary
from harness.report.chart_svg import Axes, Series, strip_svg, xy_svg
from harness.report.comparison import section
from harness.report.comparison_text import comparison_lines
from harness.report.escape import (
    html_finalize,
    md_escape,
    md_finalize,
    one_line,
    plain,
    safe_link,
    visible,
)
from harness.report.md_cut import whole_in_line
from harness.report.progress import RunningCase, still_running_line
from harness.report.render import render_html, render_markdown, template_environment
from harness.results.compare import compare_runs

# (name, the character, how every output shows it)
CHARACTERS: tuple[tuple[str, str, str], ...] = (
    ("NUL", "\x00", r"\x00"),
    ("BEL", "\x07", r"\x07"),
    ("BS", "\x08", r"\x08"),
    ("VT", "\x0b", r"\x0b"),
    ("FF", "\x0c", r"\x0c"),
    ("ESC", "\x1b", r"\x1b"),
    ("US", "\x1f", r"\x1f"),
    ("DEL", "\x7f", r"\x7f"),
    ("C1 NEL", "\x85", r"\x85"),
    ("C1 CSI", "\x9b", r"\x9b"),
    ("C1 OSC", "\x9d", r"\x9d"),
    ("ALM", "\u061c", r"\u061c"),
    ("LRM", "\u200e", r"\u200e"),
    ("RLM", "\u200f", r"\u200f"),
    ("LINE SEPARATOR", "\u2028", r"\u2028"),
    ("PARAGRAPH SEPARATOR", "\u2029", r"\u2029"),
    ("LRE", "\u202a", r"\u202a"),
    ("RLE", "\u202b", r"\u202b"),
    ("PDF", "\u202c", r"\u202c"),
    ("LRO", "\u202d", r"\u202d"),
    ("RLO", "\u202e", r"\u202e"),
    ("LRI", "\u2066", r"\u2066"),
    ("RLI", "\u2067", r"\u2067"),
    ("FSI", "\u2068", r"\u2068"),
    ("PDI", "\u2069", r"\u2069"),
    ("lone surrogate", "\ud800", r"\ud800"),
)
IDS = [name for name, _, _ in CHARACTERS]


def _html(text: str) -> str:
    """A multi-line block, a one-line cell and an attribute, as the report's templates have."""
    env = template_environment("html")
    source = '<pre class="reason">{{ v }}</pre><td title="{{ v }}">{{ v }}</td>'
    return env.from_string(source).render(v=text)


def _markdown(text: str) -> str:
    return template_environment("md").from_string("| {{ v }} |\n\n{{ v }}\n").render(v=text)


def _svg_label(text: str) -> str:
    series = (Series("#2563eb", (1.0, 2.0), (3.0, 4.0)),)
    return str(xy_svg(series, Axes(text, text), salt="t")) + str(
        strip_svg([1.0], [2.0], text, salt="u")
    )


# (renderer, what it writes for ``text``, how a backslash of an escape appears in what it writes)
RENDERERS: tuple[tuple[str, Callable[[str], str], str], ...] = (
    ("html", _html, "\\"),
    ("markdown", _markdown, "\\\\"),  # Markdown shows "\\" as one backslash
    ("md_escape", md_escape, "\\\\"),
    ("terminal visible", visible, "\\"),
    ("terminal plain", plain, "\\"),
    ("one_line", one_line, "\\"),
    ("svg chart labels", _svg_label, "\\"),
)


@pytest.mark.parametrize(
    ("renderer", "write", "backslash"), RENDERERS, ids=[r[0] for r in RENDERERS]
)
@pytest.mark.parametrize(("name", "char", "shown"), CHARACTERS, ids=IDS)
def test_every_acting_character_is_shown_by_every_renderer(
    renderer: str, write: Callable[[str], str], backslash: str, name: str, char: str, shown: str
) -> None:
    out = write(f"before{char}after")
    assert acting_in(out, "\n") == [], f"{renderer} passes {name} through raw"
    expected = "before" + shown.replace("\\", backslash) + "after"
    assert expected in (html.unescape(out) if renderer == "html" else out), f"{renderer}: {out!r}"


def test_the_oracle_knows_every_character_listed() -> None:
    """The checker's own set covers each character above, so a pass is not a blind spot."""
    assert all(ACTING.fullmatch(char) for _, char, _ in CHARACTERS)


@pytest.mark.parametrize(
    ("write", "text", "expected"),
    [
        (visible, "a\nb\r\nc\rd\te", r"a\x0ab\x0d\x0ac\x0dd\x09e"),  # one inert line
        (plain, "a\nb\r\nc\rd\te", "a b c d e"),  # one readable line
        (one_line, "\n\na\u202eb\nc", r"a\u202eb"),  # the first line, still escaped
        (one_line, "\x1b\nlater", r"\x1b"),  # a line of controls is not empty: it is shown
        (md_escape, "a\nb\r\nc\rd\te", "a<br>b<br>c<br>d\te"),  # a cell stays one line
        (html_finalize, "a\nb\r\nc\rd\te", "a\nb\nc\nd\te"),  # a <pre> keeps its lines
    ],
)
def test_line_breaks_per_context(write: Callable[[str], object], text: str, expected: str) -> None:
    assert write(text) == expected


PAGE = "| a\t| b |\n" * 500  # lines and tabs only: kept as they are, whole


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PAGE, PAGE),
        (PAGE + "\r\nx\ry", PAGE + "\nx\ny"),  # a CR is a line break still
        (PAGE + "\x1b", PAGE + r"\x1b"),  # one acting character after a page of lines
        ("\u2028" + PAGE, r"\u2028" + PAGE),
        ("\x0b\x0c\x85", r"\x0b\x0c\x85"),  # vertical tab, form feed, NEL: no line break
    ],
)
def test_lines_kept_as_lines_still_show_every_other_acting_character(
    text: str, expected: str
) -> None:
    assert visible(text, breaks="\n") == expected


def test_html_finalize_escapes_markup_too_and_keeps_it_markup() -> None:
    """An inline chart (Markup) cannot carry an acting character past the HTML environment."""
    out = html_finalize(Markup("<svg><text>a\x1b\u202eb</text></svg>"))
    assert isinstance(out, Markup)
    assert out == Markup(r"<svg><text>a\x1b\u202eb</text></svg>")
    assert html_finalize(None) is None
    assert html_finalize(5) == "5"


@pytest.mark.parametrize(
    "value", [0, -3, 2**70, 1.5, -1.5e-07, 1e300, float("inf"), float("-inf"), float("nan"), True]
)
def test_a_number_takes_the_short_way_to_what_the_escapers_make_of_its_text(value: object) -> None:
    """Numbers skip the escaper (nothing in them acts); what they become is what their text
    through the escaper becomes, in HTML and Markdown (a bool takes the long way: True)."""
    assert html_finalize(value) == visible(str(value), breaks="\n")
    assert md_finalize(value) == md_escape(str(value))


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [("plain", None, "plain"), ("plain text", 6, "plain…"), ("a\x1bb", 2, "a…"), ("", None, "")],
)
def test_visible_cuts_text_with_and_without_acting_characters(
    text: str, limit: int | None, expected: str
) -> None:
    assert visible(text, limit) == expected


def test_a_link_with_an_acting_character_is_no_link() -> None:
    assert safe_link("https://example.com/a\u202egpj.exe") is None
    assert safe_link("https://example.com/\x1b[2J") is None
    assert safe_link("https://example.com/ok") == "https://example.com/ok"


# Each untrusted field of the hostile run carries one of these (and the evidence all of them).
ACTING_TEXTS = (
    "\x1b[2J\x1b[31mred\x1b[0m\x1b]0;pwned\x07",  # clear screen, colour, set the title
    "abc\u202edcba",  # right-to-left override
    "\u2066iso\u2069late",  # isolates
    "nul\x00byte",
    "csi\x9b31m8bit",  # the one-byte CSI
    "line\u2028sep",
    "mixed\x1b[5m\u202e\u2066\x00\x9b\u2028\r\nend",
)


def _comparison_report(baseline: RunRecord, current: RunRecord, out: Path) -> tuple[str, str]:
    """report.html and report.md as a run with ``--baseline`` renders them."""
    defaults = default_sections()
    sections = (defaults[0], section(compare_runs(baseline, current)), *defaults[1:])
    paths = render(current, out, sections)
    return paths.html.read_text(), paths.md.read_text()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunRecord, RunRecord]:
    return hostile_runs(ACTING_TEXTS, tmp_path_factory.mktemp("acting"))


def test_no_raw_acting_character_in_any_output(runs: tuple[RunRecord, RunRecord]) -> None:
    baseline, current = runs
    assert_no_acting_characters(current)
    assert_no_acting_characters(baseline)


def test_no_raw_acting_character_with_a_baseline(
    runs: tuple[RunRecord, RunRecord], tmp_path: Path
) -> None:
    baseline, current = runs
    report_html, report_md = _comparison_report(baseline, current, tmp_path)
    assert 'id="comparison"' in report_html  # the comparison section was built
    assert acting_in(report_html, "\n\t") == []
    assert acting_in(report_md, "\n\t") == []
    lines = [
        *comparison_lines(compare_runs(baseline, current)),
        *terminal_summary(current),
        *(case_line(r) for r in current.results),
        *(
            still_running_line(RunningCase(r.case_id, r.model, 1, 1, 0.0), 1.0)
            for r in current.results
        ),
    ]
    assert [hit for line in lines for hit in acting_in(line)] == []


def test_a_run_folder_and_its_written_reports(
    runs: tuple[RunRecord, RunRecord], tmp_path: Path
) -> None:
    from hostile_run import through_record

    run_dir = tmp_path / "run"
    render(through_record(runs[1], run_dir), run_dir)
    assert_no_acting_characters(run_dir)
    assert set(acting_in_outputs(runs[1], run_dir)) >= {
        "report.html as written",
        "report.md as written",
    }


@pytest.mark.usefixtures("chartless")
def test_the_evidence_block_shows_its_escapes_and_keeps_its_lines(
    runs: tuple[RunRecord, RunRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    current = runs[1]
    report_html, report_md = render_html(current), render_markdown(current)
    assert "\n" + EVIDENCE_SHOWN in html.unescape(report_html)  # a line break of the <pre>
    assert whole_in_line("cell", "report.html") in report_md  # report.md cuts it to fit 120
    module = importlib.import_module("harness.report.render")
    monkeypatch.setattr(module, "fit_tables", lambda markdown, whole_in: markdown)
    shown_md = EVIDENCE_SHOWN.replace("\\", "\\\\").replace("[", r"\[").replace("]", r"\]")
    assert "<br>" + shown_md in render_markdown(current)  # a line of the whole table cell
    assert r"abc\u202edcba" in html.unescape(report_html)  # a model name, shown not obeyed


@pytest.mark.usefixtures("chartless")
def test_the_check_fires_when_the_html_escaper_is_off(
    runs: tuple[RunRecord, RunRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Negative control: jinja2's autoescape alone passes ESC and the bidi override through."""
    module = importlib.import_module("harness.report.render")
    monkeypatch.setattr(module, "html_finalize", lambda value: value)
    found = acting_in_outputs(runs[1])
    assert found["report.md"] == [] and found["terminal summary"] == []
    hits = " ".join(found["report.html"])
    assert "U+001B" in hits and "U+202E" in hits and "U+2066" in hits
    with pytest.raises(AssertionError, match=r"report\.html"):
        assert_no_acting_characters(runs[1])
