"""Fixtures for the report tests; the run builders live in ``report_fixtures.py``."""

from __future__ import annotations

import pytest
from markupsafe import Markup
from report_fixtures import realistic_run

from harness.core.types import RunRecord


@pytest.fixture
def demo_run() -> RunRecord:
    return realistic_run()


@pytest.fixture()
def chartless(monkeypatch: pytest.MonkeyPatch) -> None:
    """Charts left empty: a negative control, or a check of one block's text, needs the
    report's text, not its ~150 matplotlib charts (numbers and the harness's own labels only;
    most of a hostile render's CPU). The tests that look for acting characters in every output
    render the charts."""
    from harness.report.chart_model import Chart

    monkeypatch.setattr(Chart, "svg", property(lambda _: Markup('<svg class="chart-svg"></svg>')))
