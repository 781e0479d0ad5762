"""Reports: one module per section, Markdown and self-contained HTML from jinja2 templates."""

from __future__ import annotations

from harness.report.contents import default_sections
from harness.report.render import (
    ReportPaths,
    render,
    render_both,
    render_html,
    render_markdown,
)
from harness.report.sections import Section
from harness.report.terminal import terminal_summary

__all__ = [
    "ReportPaths",
    "Section",
    "default_sections",
    "render",
    "render_both",
    "render_html",
    "render_markdown",
    "terminal_summary",
]
