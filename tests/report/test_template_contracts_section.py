"""The template contracts section: check x model from the cases' artifacts, failures before
warnings with their evidence, and hostile template output escaped in HTML and Markdown."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from report_fixtures import EVIL, case, make_run

from harness.core.types import CaseResult, Status
from harness.report import render_html, render_markdown
from harness.scenarios.template_contracts.section import build


def check(name: str, verdict: str, outcome: str, evidence: str = "rendered") -> dict[str, Any]:
    return {"name": name, "verdict": verdict, "outcome": outcome, "evidence": evidence}


def contracts_case(model: str, checks: list[dict[str, Any]]) -> CaseResult:
    status = Status.FAILED if any(c["verdict"] == "fail" for c in checks) else Status.PASSED
    return replace(case(model, "template_contracts", status), artifacts={"checks": checks})


RUN = make_run(
    [
        contracts_case(
            "smollm2",
            [
                check("double_bos", "pass", "single"),
                check("system_role", "pass", "supported"),
                check("tools_kwarg", "warn", "ignored", "get_weather_zq absent"),
            ],
        ),
        contracts_case(
            "evil|model",
            [
                check("system_role", "fail", "dropped", EVIL),
                check("double_bos", "n/a", "no_bos"),
                check("brand_new_check", "pass", "fine"),
            ],
        ),
    ]
)


@pytest.mark.parametrize(
    ("check_name", "model_index", "text", "note", "css"),
    [
        ("double_bos", 0, "pass", "single", "st-passed"),
        ("system_role", 1, "FAIL", "dropped", "st-failed"),
        ("tools_kwarg", 0, "WARN", "ignored", "st-xfailed"),
        ("tools_kwarg", 1, "—", None, None),
        ("double_bos", 1, "n/a", "no_bos", "st-skipped"),
    ],
)
def test_cells(
    check_name: str, model_index: int, text: str, note: str | None, css: str | None
) -> None:
    data = build(RUN)
    assert data is not None
    row = next(r for r in data.table.rows if r[0].text == check_name)
    cell = row[1 + model_index]
    assert (cell.text, cell.note, cell.css) == (text, note, css)


def test_rows_in_catalog_order_then_unknown_checks() -> None:
    data = build(RUN)
    assert data is not None
    assert [r[0].text for r in data.table.rows] == [
        "double_bos", "system_role", "tools_kwarg", "brand_new_check"
    ]  # fmt: skip


def test_failures_come_before_warnings() -> None:
    data = build(RUN)
    assert data is not None
    assert [(f.model, f.check, f.verdict) for f in data.findings] == [
        ("evil|model", "system_role", "fail"),
        ("smollm2", "tools_kwarg", "warn"),
    ]


def test_no_cases_no_section() -> None:
    assert build(make_run([case("m", "load", Status.PASSED)])) is None


def test_hostile_evidence_is_escaped() -> None:
    html, md = render_html(RUN), render_markdown(RUN)
    assert "Template contracts" in html and "<script>alert" not in html
    row = next(line for line in md.splitlines() if line.startswith("| evil\\|model | system_role"))
    assert "<script>" not in row
