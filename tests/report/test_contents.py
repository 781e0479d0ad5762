"""The report's sections: the built-in ones registered as plug-ins are, each placed by its
``order``; a plug-in's goes where its ``order`` says (by default after the built-in metric
sections, before "Other metrics")."""

from __future__ import annotations

import pytest
from gfm_facts import unwrapped
from report_fixtures import case, make_run

from harness.core.registry import Registry
from harness.report import contents, render_markdown
from harness.report.sections import CLOSING, METRICS, OPENING, PLUGIN_ORDER, Section


def _built_in() -> list[Section]:
    return [contents.REPORT_SECTIONS.get(key) for key in contents.BUILT_IN]


def test_every_built_in_section_loads_under_its_own_key() -> None:
    assert [s.key for s in _built_in()] == list(contents.BUILT_IN)


def test_the_built_in_sections_each_have_a_place_of_their_own() -> None:
    report_only = [contents.REPORT_SECTIONS.get(key).order for key in contents.REPORT_ONLY]
    assert report_only == sorted(report_only)  # listed in report order
    orders = [s.order for s in _built_in()]
    assert len(set(orders)) == len(orders)
    assert all(s.order < PLUGIN_ORDER for s in _built_in() if s.claims)  # metrics before plug-ins


@pytest.mark.parametrize(
    "order", [PLUGIN_ORDER, OPENING + 5, METRICS + 5, CLOSING + 5, CLOSING + 1000]
)
def test_a_plugin_section_goes_where_its_order_says(
    order: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = Registry("report section", {**contents.BUILT_IN, "extra": "x:y"})
    registry._loaded["extra"] = Section("extra", "Extra", lambda run: None, order=order)
    monkeypatch.setattr(contents, "REPORT_SECTIONS", registry)
    sections = contents.default_sections()
    keys = [s.key for s in sections]
    where = keys.index("extra")
    assert all(s.order <= order for s in sections[:where])
    assert all(s.order > order for s in sections[where + 1 :])
    if order == PLUGIN_ORDER:  # by default: after every metric section, before "Other metrics"
        assert keys.index("memory") < where < keys.index("other")


def test_a_built_in_section_that_cannot_be_loaded_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(contents.BUILT_IN, "ledger", "no_such_module_for_harness:SECTION")
    registry: Registry[Section] = Registry("report section", contents.BUILT_IN)
    monkeypatch.setattr(contents, "REPORT_SECTIONS", registry)
    markdown = unwrapped(render_markdown(make_run([case("m", "load")])))
    assert "report section 'ledger' could not be loaded" in markdown
    assert "## Summary" in markdown  # the rest of the report is there


def test_a_scenario_folder_with_a_section_py_brings_its_section() -> None:
    found = contents.scenario_sections()
    assert found["stall"] == "harness.scenarios.stall.section:SECTION"
    assert "throughput" not in found  # no section.py: its figures are the performance section's
    assert set(found) <= set(contents.BUILT_IN)
