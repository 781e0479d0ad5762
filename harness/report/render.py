"""Render a run as ``report.md`` and a self-contained ``report.html`` from jinja2 templates.

Every ``{{ value }}`` goes through the environment's ``finalize`` first: in HTML
``html_finalize`` shows control and bidi characters as visible escapes, then jinja2 autoescapes;
in Markdown ``md_escape`` does both. Model output can neither break a table, inject markup nor
reorder or hide text in either file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2

from harness.core.exception_line import exception_line
from harness.core.types import RunRecord
from harness.report.contents import default_sections, scenarios_in
from harness.report.escape import html_finalize, md_finalize, md_url
from harness.report.md_blocks import gfm_blocks
from harness.report.md_tables import fit_tables
from harness.report.sections import PLUGIN_PREFIX, BuiltSection, Section
from harness.report.table_html import html_rows
from harness.report.table_md import md_rows
from harness.report.template_cache import template_cache
from harness.results.report_dir import make_dir, write_text_atomic

MD_FILE = "report.md"
HTML_FILE = "report.html"


@dataclass(frozen=True)
class ReportPaths:
    md: Path
    html: Path


def _environment(kind: str, sections: Sequence[Section] = ()) -> jinja2.Environment:
    """A fresh environment per render: HTML (acting characters shown, then autoescaped) or
    Markdown, each escaped by its ``finalize``; plug-in sections' partials load from their own
    folders as ``plugin/<key>/...``, escaped the same way."""
    html = kind == "html"
    plugins = {s.key: jinja2.FileSystemLoader(s.templates) for s in sections if s.templates}
    loader: jinja2.BaseLoader = jinja2.PackageLoader("harness.report", "templates")
    if plugins:
        nested = jinja2.PrefixLoader(dict(plugins))
        loader = jinja2.ChoiceLoader([loader, jinja2.PrefixLoader({PLUGIN_PREFIX: nested})])
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=html,
        finalize=html_finalize if html else md_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        bytecode_cache=template_cache(),  # compiled partials kept between renders
    )
    env.filters["mdurl"] = md_url
    if html:
        env.globals["html_rows"] = html_rows
    else:
        env.globals["md_rows"] = md_rows
    return env


SECTION_ERROR_TEMPLATE = "section_error.{kind}.j2"


@dataclass(frozen=True)
class SectionData:
    """A section's data, built once and laid out in both formats; ``error``: the one line its
    ``build`` raised instead."""

    section: Section
    data: object
    error: str | None = None


def build_sections(run: RunRecord, sections: Sequence[Section]) -> list[SectionData]:
    """Each section's data (a section whose ``build`` returns None is left out); a section
    whose ``build`` raises is shown as that one line."""
    built = []
    for section in sections:
        try:
            data = section.build(run)
        except Exception as exc:  # a bug in one section must not cost the whole report
            built.append(SectionData(section, None, exception_line(exc)))
            continue
        if data is not None:
            built.append(SectionData(section, data))
    return built


def _laid_out(built: Sequence[SectionData], kind: str) -> list[BuiltSection]:
    """The built sections with the partials of ``kind`` (``"md"`` or ``"html"``)."""
    laid = []
    for one in built:
        section = one.section
        if one.error is not None:
            template = SECTION_ERROR_TEMPLATE.format(kind=kind)
            laid.append(BuiltSection(section.key, section.title, one.error, template))
            continue
        template = section.html_template if kind == "html" else section.md_template
        laid.append(BuiltSection(section.key, section.title, one.data, template))
    return laid


def _failed(section: Section, kind: str, exc: BaseException) -> BuiltSection:
    return BuiltSection(
        section.key, section.title, exception_line(exc), SECTION_ERROR_TEMPLATE.format(kind=kind)
    )


def _render(
    run: RunRecord, sections: Sequence[Section], built: Sequence[SectionData], kind: str
) -> str:
    env = _environment(kind, sections)
    template = env.get_template(f"report.{kind}.j2")
    sections_built = _laid_out(built, kind)
    try:  # each partial rendered once, where the report includes it
        return template.render(run=run, sections=sections_built)
    except Exception:  # a partial failed on its data: each is tried on its own, below
        pass
    laid = []
    for section in sections_built:
        try:  # a partial that fails on its data is reported the same way
            env.get_template(section.template).render(run=run, section=section)
        except Exception as exc:
            section = _failed(Section(section.key, section.title, lambda r: None), kind, exc)
        laid.append(section)
    return template.render(run=run, sections=laid)


def _chosen(run: RunRecord, sections: Sequence[Section] | None) -> Sequence[Section]:
    return default_sections(scenarios_in(run)) if sections is None else sections


def _markdown(
    run: RunRecord, sections: Sequence[Section], built: Sequence[SectionData], whole_in: str
) -> str:
    return gfm_blocks(fit_tables(_render(run, sections, built, "md"), whole_in), whole_in)


def render_markdown(
    run: RunRecord, sections: Sequence[Section] | None = None, *, whole_in: str = HTML_FILE
) -> str:
    """report.md's text: blank lines around each heading and table, as GFM needs them, no
    line over 120 characters where a space or a table's columns allow (a cell cut to fit
    says that ``whole_in``, the HTML file beside it, holds it whole)."""
    chosen = _chosen(run, sections)
    return _markdown(run, chosen, build_sections(run, chosen), whole_in)


def render_html(run: RunRecord, sections: Sequence[Section] | None = None) -> str:
    chosen = _chosen(run, sections)
    return _render(run, chosen, build_sections(run, chosen), "html")


def render_both(
    run: RunRecord, sections: Sequence[Section] | None = None, *, whole_in: str = HTML_FILE
) -> tuple[str, str]:
    """The Markdown and the HTML text (as :func:`render_markdown` and :func:`render_html`),
    each section built once for both."""
    chosen = _chosen(run, sections)
    built = build_sections(run, chosen)
    return _markdown(run, chosen, built, whole_in), _render(run, chosen, built, "html")


def render(run: RunRecord, out_dir: Path, sections: Sequence[Section] | None = None) -> ReportPaths:
    """Write ``out_dir/report.md`` and ``out_dir/report.html`` (same content, each section built
    once) and return them.

    Both are rendered first, then each is written to a temporary name and renamed over the
    old one, so a reader sees a whole report, old or new, never a cut one. A folder that cannot
    be written is a one-line :class:`~harness.results.report_dir.ReportDirError`.
    """
    markdown, html = render_both(run, sections)
    make_dir(out_dir)
    paths = ReportPaths(md=out_dir / MD_FILE, html=out_dir / HTML_FILE)
    write_text_atomic(paths.md, markdown)
    write_text_atomic(paths.html, html)
    return paths


def template_environment(kind: str) -> jinja2.Environment:
    """The report's template environment (``"md"`` or ``"html"``) for documents other than
    the run report (the pin-set comparison), with the same escaping."""
    return _environment(kind)
