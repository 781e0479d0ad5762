"""The API contracts section: check x server from the cases' artifacts, failures with their
evidence, and the server's hostile output escaped in HTML and Markdown."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from report_fixtures import EVIL, case, make_run, metric

from harness.core.types import CaseResult, RunRecord, Status, Unit
from harness.report import render_html, render_markdown, unclaimed
from harness.scenarios.api_contracts.section import SECTION, build

UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def check(name: str, verdict: str, reason: str = "", **extra: Any) -> dict[str, Any]:
    return {"name": name, "verdict": verdict, "reason": reason or f"{name} {verdict}", **extra}


def contracts_case(model: str, engine: str, checks: list[dict[str, Any]]) -> CaseResult:
    failed = [c for c in checks if c["verdict"] == "fail"]
    status = Status.FAILED if failed else Status.PASSED
    metrics = [
        metric("api_contracts.passed", Unit.COUNT, sum(c["verdict"] == "pass" for c in checks)),
        metric("api_contracts.failed", Unit.COUNT, len(failed)),
        metric("api_contracts.not_applicable", Unit.COUNT, 0),
    ]
    base = case(model, "api_contracts", status, metrics=metrics)
    return replace(
        base, artifacts={"engine": engine, "endpoint": "http://127.0.0.1:1", "checks": checks}
    )


def contracts_run() -> RunRecord:
    hostile = check(
        "stop_string",
        "fail",
        "streamed, stop across chunks: the stop string is in the text",
        evidence=[
            {"request": 'POST /v1/chat/completions {"stop": ["|x|"]}', "response": EVIL},
            {"request": "POST /v1/chat/completions " + EVIL, "response": "HTTP 200\ncontent: ok"},
        ],
    )
    evil_server = contracts_case(
        "evil|model",
        "url",
        [
            hostile,
            check("seed", "pass"),
            check("tool_call_markup", "not_applicable", "no tool call made " + EVIL),
        ],
    )
    clean = contracts_case("smollm2", "mlx_lm.server 0.31", [check("seed", "pass")])
    return make_run([evil_server, clean, case("m", "throughput")])


def test_check_by_server_table_and_findings() -> None:
    data = build(contracts_run())
    assert data is not None
    assert [c.label for c in data.table.columns] == [
        "check",
        "contract",
        "evil|model (url)",
        "smollm2 (mlx_lm.server 0.31)",
    ]
    rows = {row[0].text: [cell.text for cell in row[2:]] for row in data.table.rows}
    assert list(rows) == ["stop_string", "seed", "tool_call_markup"]  # the catalog's order
    assert rows == {
        "stop_string": ["FAIL", "—"],
        "seed": ["pass", "pass"],
        "tool_call_markup": ["n.a.", "—"],
    }
    (failure,) = data.failures
    assert (failure.check, failure.server) == ("stop_string", "evil|model (url)")
    assert failure.evidence[0].response == EVIL
    (skipped,) = data.not_applicable
    assert skipped.check == "tool_call_markup" and skipped.evidence == ()


def test_absent_without_contract_cases() -> None:
    assert build(make_run([case("m", "throughput")])) is None


def test_hostile_evidence_is_escaped_in_both_outputs() -> None:
    run = contracts_run()
    html, md = render_html(run), render_markdown(run)
    assert "<script>alert(1)</script>" not in html
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 3  # response, request, reason
    assert "<script" not in md and "&lt;script>alert(1)&lt;/script>" in md
    assert re.search(r"(?<!\\)\]\(http://evil", md) is None
    section = md[md.index("## API contracts") :]
    section = section[: section.index("\n## ", 1)]
    tables = [line for line in section.splitlines() if line.startswith("|")]
    widths = {len(UNESCAPED_PIPE.findall(line)) for line in tables[:5]}  # check x server table
    assert widths == {5}, tables[:5]
    evidence = [line for line in tables if "POST /v1/" in line]
    assert len(evidence) == 2
    assert all(len(UNESCAPED_PIPE.findall(line)) == 3 for line in evidence), evidence


def test_contract_metrics_are_claimed_by_the_section() -> None:
    run = contracts_run()
    assert unclaimed.section(()).build(run) is not None  # unclaimed, they would show there
    assert unclaimed.section(SECTION.claims).build(run) is None
    assert "## Other metrics" not in render_markdown(run)


def test_checks_not_judged_are_listed_apart_with_their_reason() -> None:
    """A case whose time ran out: the judged verdicts stay, the rest read "not judged"."""
    reason = "not judged: the case's time limit (timeout_s) ran out before it ran"
    server = contracts_case(
        "slow", "url", [check("seed", "pass"), check("top_p", "unjudged", reason)]
    )
    server = replace(server, status=Status.TIMED_OUT)
    run = make_run([server])
    data = build(run)
    assert data is not None
    assert [(f.check, f.reason) for f in data.unjudged] == [("top_p", reason)]
    cells = {row[0].text: row[2] for row in data.table.rows}
    assert (cells["seed"].text, cells["top_p"].text) == ("pass", "not judged")
    assert cells["top_p"].css == "st-timed"
    html, md = render_html(run), render_markdown(run)
    assert "<h3>Not judged</h3>" in html and "Not judged:" in md
    assert "ran out before it ran" in html and "ran out before it ran" in md
