"""Whole-report properties: both files written, untrusted text escaped, nothing external."""

from __future__ import annotations

import dataclasses
import errno
import fnmatch
import math
import os
import re
from pathlib import Path
from typing import Any

import pytest
from gfm_facts import unwrapped
from report_fixtures import EVIL, case, make_run, metric, realistic_run

from harness.core.types import RunRecord, Status, Unit
from harness.report import default_sections, render, render_html, render_markdown
from harness.report.sections import Section
from harness.results.report_dir import ReportDirError
from harness.results.store import write_record

UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
TEMPLATES = Path(__file__).parents[2] / "harness" / "report" / "templates"


def every_status_run(*, finished: bool = True) -> RunRecord:
    results = [
        case("m", f"s-{status.value}", status, reason=f"because {status.value}")
        for status in Status
    ]
    return make_run(results, finished=finished)


def md_tables(md: str) -> list[list[str]]:
    tables: list[list[str]] = []
    current: list[str] = []
    for line in md.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return tables


def test_render_writes_both_files(tmp_path: Path) -> None:
    paths = render(realistic_run(), tmp_path / "out")
    assert paths.md == tmp_path / "out" / "report.md"
    assert paths.html == tmp_path / "out" / "report.html"
    assert paths.md.read_text(encoding="utf-8").startswith("# mlx-harness report")
    assert paths.html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_render_is_deterministic() -> None:
    run = realistic_run()
    assert render_markdown(run) == render_markdown(run)
    assert render_html(run) == render_html(run)


def test_rendering_a_stored_run(tmp_path: Path) -> None:
    cut = dataclasses.replace(realistic_run(), finished_at=None)  # the run was cut short
    loaded = write_record(cut, tmp_path)
    assert "Incomplete run" in render_markdown(loaded)


@pytest.mark.parametrize("status", list(Status))
def test_every_status_appears_in_both_outputs(status: Status) -> None:
    run = every_status_run()
    md, html = render_markdown(run), render_html(run)
    for text in (md, html):
        assert f"s-{status.value}" in text
        assert status.value in text
    if status is not Status.PASSED:
        assert f"because {status.value}" in md
        assert f"because {status.value}" in html


def test_model_output_is_escaped_in_html() -> None:
    html = render_html(realistic_run())
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<script") == 1  # ours: the sortable-table script
    assert 'href="http://evil' not in html


def test_model_output_is_escaped_in_markdown() -> None:
    md = render_markdown(realistic_run())
    assert "<script" not in md
    assert "&lt;script>alert(1)&lt;/script>" in md
    assert r"\| \`code\`" in md
    assert re.search(r"(?<!\\)\]\(http://evil", md) is None  # no link or image injected


def test_markdown_tables_keep_their_shape() -> None:
    """Every row of every table has as many cell separators as its header."""
    md = render_markdown(realistic_run())
    tables = md_tables(md)
    assert len(tables) >= 6
    for table in tables:
        expected = len(UNESCAPED_PIPE.findall(table[0]))
        for row in table[1:]:
            assert len(UNESCAPED_PIPE.findall(row)) == expected, row


def test_newlines_in_reasons_stay_inside_the_cell() -> None:
    run = make_run([case("m", "s", Status.SKIPPED, reason="one\ntwo | three\n\nfour")])
    md = render_markdown(run)
    assert "one<br>two \\| three<br><br>four" in md


def test_hostile_model_names_and_links() -> None:
    run = make_run(
        [
            case(
                "evil|<b>model</b>",
                "s",
                Status.XFAILED,
                reason="known",
                link="javascript:alert(1)",
            )
        ]
    )
    html, md = render_html(run), render_markdown(run)
    assert "javascript:" not in html and "javascript:" not in md
    assert "<b>model" not in html and "<b>model" not in md
    assert r"evil\|&lt;b>model&lt;/b>" in md


def test_html_loads_nothing_external() -> None:
    html = render_html(realistic_run())
    # url(#id) is a chart's own clip path inside the page: it loads nothing
    for pattern in (r"\bsrc\s*=", r"<link\b", r"@import", r"url\((?!#)", r"<iframe", r"<img"):
        assert re.search(pattern, html, re.IGNORECASE) is None, pattern
    # anchors to issues are the only http(s) references besides escaped model text
    hrefs = re.findall(r'href="(https?://[^"]*)"', html)
    assert set(hrefs) == {
        "https://github.com/ml-explore/mlx-lm/issues/123",
        "https://github.com/ml-explore/mlx-vlm/issues/77",
    }


def test_html_without_links_has_no_urls_at_all() -> None:
    html = render_html(every_status_run())
    assert "http://" not in html and "https://" not in html


def test_sortable_script_and_tables() -> None:
    html = render_html(realistic_run())
    assert 'class="sortable' in html
    assert 'querySelectorAll("table.sortable")' in html
    assert "aria-sort" in html
    assert "<style>" in html


@pytest.mark.parametrize("finished", [True, False])
def test_incomplete_run_is_flagged(finished: bool) -> None:
    run = realistic_run(finished=finished)
    md, html = render_markdown(run), render_html(run)
    assert ("Incomplete run" in md) is not finished
    assert ("Incomplete run" in html) is not finished


def test_machine_and_blas_in_header() -> None:
    md = render_markdown(realistic_run())
    assert "AMD EPYC 7B13" in md
    assert "64.0 GiB" in md
    assert "openblas (preloaded) (OpenBLAS in use: yes)" in md
    assert "mlx 0.29.1" in md and "mlx-vlm not installed" in md
    assert "0123456789ab" in md


def test_nan_and_empty_samples_render_as_missing() -> None:
    run = make_run(
        [
            case(
                "m",
                "throughput",
                point={"prompt_tokens": 8},
                metrics=[
                    metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND),
                    metric("throughput.prefill_tps", Unit.TOKENS_PER_SECOND, math.nan, math.nan),
                    metric("throughput.ttft_s", Unit.SECONDS, 0.01, math.nan, 0.03),
                ],
            )
        ]
    )
    md, html = render_markdown(run), render_html(run)
    for text in (md, html):
        assert re.search(r"(?<![a-z])nan(?![a-z])", text, re.IGNORECASE) is None
    row = next(line for line in md.splitlines() if line.startswith("| m | pp8"))
    assert "| — | — | 20.0 ± 14.1 |" in row  # prefill, decode, TTFT over the finite samples


def test_empty_run_renders() -> None:
    run = make_run([], finished=False)
    md = render_markdown(run)
    assert "0 cases" in md and "Incomplete run" in md
    assert "<!DOCTYPE html>" in render_html(run)


def test_a_new_section_is_one_module_and_two_partials(tmp_path: Path) -> None:
    """Adding a section needs no change to render: a Section value and two templates."""
    extra = Section("models", "Models again", lambda run: default_sections()[-1].build(run))
    md = render_markdown(realistic_run(), [*default_sections()[:1], extra])
    assert "## Models again" in md and "## Compatibility" not in md


def test_every_section_has_both_partials() -> None:
    for section in default_sections():
        if section.templates is not None:  # a scenario folder's section: its partials beside it
            for kind in ("md", "html"):
                assert (section.templates / f"{section.key}.{kind}.j2").is_file(), section.key
            continue
        assert (TEMPLATES / section.md_template).is_file(), section.key
        assert (TEMPLATES / section.html_template).is_file(), section.key


def test_templates_are_package_data() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    globs = pyproject["tool"]["setuptools"]["package-data"]["harness"]
    for path in TEMPLATES.iterdir():
        relative = path.relative_to(TEMPLATES.parents[1]).as_posix()
        assert any(fnmatch.fnmatch(relative, g) for g in globs), relative
    scenarios = TEMPLATES.parents[1] / "scenarios"
    for path in [*scenarios.glob("*/*.j2"), *scenarios.glob("*/*.md")]:  # partials, docs
        relative = path.relative_to(TEMPLATES.parents[1]).as_posix()
        assert any(fnmatch.fnmatch(relative, g) for g in globs), relative


def test_evil_fixture_is_really_evil() -> None:
    assert "<script>" in EVIL and "|" in EVIL and "\n" in EVIL


@pytest.mark.parametrize(
    ("changes", "md_fragment", "html_fragment"),
    [
        (
            {"interrupted": "interrupted by SIGINT", "finished_at": None},
            "**⏹ Interrupted run:** interrupted by SIGINT. Cases that had not finished are "
            "marked interrupted; continue the run with --resume 20250101T120000-abc123.",
            "<strong>⏹ Interrupted run:</strong> interrupted by SIGINT.",
        ),
        (
            {"read_warnings": ("reports/r/run.jsonl:9: last line cut off (12 bytes)",)},
            "**⚠ record:** reports/r/run.jsonl:9: last line cut off (12 bytes)",
            "<strong>⚠ record:</strong> reports/r/run.jsonl:9: last line cut off (12 bytes)",
        ),
        (
            {"read_warnings": (EVIL,), "interrupted": EVIL, "finished_at": None},
            "&lt;script>alert(1)&lt;/script>",
            "&lt;script&gt;alert(1)&lt;/script&gt;",
        ),
    ],
    ids=["interrupted", "read warning", "escaped"],
)
def test_header_shows_interruption_and_read_warnings(
    changes: dict[str, Any], md_fragment: str, html_fragment: str
) -> None:
    run = dataclasses.replace(realistic_run(), **changes)
    md, html = render_markdown(run), render_html(run)
    assert md_fragment in unwrapped(md) and html_fragment in html
    assert "<script>" not in md and "<script>alert" not in html
    assert ("Incomplete run" in md) is False  # an interrupted run says why instead


def test_render_replaces_the_files_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new report replaces the old by rename (a new inode); a failed write keeps the old."""
    first = render(realistic_run(), tmp_path)
    inode = first.html.stat().st_ino
    old_html = first.html.read_bytes()
    second = render(realistic_run(), tmp_path)
    assert second.html.stat().st_ino != inode and second.html.read_bytes() == old_html
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.md"]

    def full(fd: int, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(ReportDirError) as info:
        render(every_status_run(), tmp_path)
    assert str(info.value).startswith(f"{tmp_path / 'report.md'}: out of space")
    monkeypatch.undo()
    assert second.html.read_bytes() == old_html
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.md"]


def test_a_section_is_built_once_for_both_files(tmp_path: Path) -> None:
    """``render`` lays one build of each section out as Markdown and as HTML: a section's
    ``build`` runs once and both files show what it built."""
    calls: list[str] = []

    def build(run: RunRecord) -> str:
        calls.append(run.run_id)
        return f"built {len(calls)} times"

    partials = tmp_path / "partials"
    partials.mkdir()
    for kind in ("md", "html"):
        (partials / f"counted.{kind}.j2").write_text("{{ section.data }}\n")
    counted = Section("counted", "Counted", build, templates=partials)
    run = realistic_run()
    paths = render(run, tmp_path / "out", [*default_sections()[:1], counted])
    assert calls == [run.run_id]
    assert "built 1 times" in paths.md.read_text() and "built 1 times" in paths.html.read_text()
