"""Report sections from plug-ins (entry-point group ``mlx_harness.report_sections``): their own
partials, which may include the built-in ones, escaped as the rest; a plug-in that cannot be
loaded, or is no Section, is one line in the report, never a lost report."""

from __future__ import annotations

from pathlib import Path

import pytest
from gfm_facts import unwrapped
from report_fixtures import EVIL, case, make_run, metric

from harness.api import Cell, Column, Section, Table
from harness.core.registry import Registry
from harness.core.types import RunRecord, Unit
from harness.report import contents, render_html, render_markdown


def _with_plugins(targets: dict[str, str]) -> Registry[Section]:
    """The report's registry with plug-ins added, as entry points add them."""
    return Registry("report section", {**contents.BUILT_IN, **targets})


def _table(run: RunRecord) -> Table:
    return Table(
        (Column("model"), Column("speed", numeric=True)),
        tuple((Cell(r.model), Cell("fast")) for r in run.results),
    )


def test_a_plugin_section_renders_its_partials_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "speeds.md.j2").write_text(
        '{% with table = section.data %}{% include "table.md.j2" %}{% endwith %}'
    )
    (tmp_path / "speeds.html.j2").write_text(
        '{% with table = section.data %}{% include "table.html.j2" %}{% endwith %}'
    )
    section = Section("speeds", f"Speeds {EVIL}", _table, templates=tmp_path)
    registry = _with_plugins({"speeds": "x:y"})
    registry._loaded["speeds"] = section  # as loaded from an entry point
    monkeypatch.setattr(contents, "REPORT_SECTIONS", registry)
    run = make_run(
        [
            case(
                EVIL,
                "throughput",
                metrics=[metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, 5.0)],
            )
        ]
    )
    markdown, html = render_markdown(run), render_html(run)
    assert "| model | speed |" in markdown
    assert EVIL not in html and EVIL not in markdown  # the plug-in's title and cells escaped
    assert "Speeds" in html and "| model | speed |" in markdown


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("no_such_module_for_harness:SECTION", "No module named 'no_such_module_for_harness'"),
        ("harness.core.types:Unit", "EnumType is not a harness.api.Section"),
    ],
)
def test_a_broken_plugin_is_one_line_in_the_report(
    target: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = _with_plugins({"broken": target})
    monkeypatch.setattr(contents, "REPORT_SECTIONS", registry)
    run = make_run([case("m", "load")])
    markdown = unwrapped(render_markdown(run))
    assert "report section plug-in 'broken' could not be loaded" in markdown
    assert why in markdown
    assert "## " in markdown  # the rest of the report is there


def test_a_partial_that_fails_on_its_data_is_one_line_and_the_rest_renders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report renders each partial once; when one fails on its data, each is tried on its
    own and the failing one becomes the section's one line (the others render as they do)."""
    for kind in ("md", "html"):
        (tmp_path / f"broken.{kind}.j2").write_text("{{ section.data.no_such_field }}")
    section = Section("broken", "Broken", lambda run: "data", templates=tmp_path)
    registry = _with_plugins({"broken": "x:y"})
    registry._loaded["broken"] = section
    run = make_run([case("m", "load")])
    whole = render_markdown(run), render_html(run)  # without the plug-in
    monkeypatch.setattr(contents, "REPORT_SECTIONS", registry)
    markdown, html = render_markdown(run), render_html(run)
    for text in (unwrapped(markdown), html):
        assert "This section could not be built" in text
        assert "no_such_field" in text
    headings = [line for line in whole[0].splitlines() if line.startswith("## ")]
    assert headings
    shown = [line for line in markdown.splitlines() if line.startswith("## ")]
    assert sorted(shown) == sorted([*headings, "## Broken"])  # every other section is there
    assert len(html) > len(whole[1])
