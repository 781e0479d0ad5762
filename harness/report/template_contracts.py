"""Template contracts section: check x model (the ``template_contracts`` cases), each cell the
verdict and its one-word outcome (supported, folded, dropped, ignored, ...), then every
failure and warning with its evidence (the rendered prompt, shortened).

Everything comes from the cases' ``checks`` artifact. Evidence is rendered template output:
raw text in the data, escaped by the templates like every other value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.core.types import RunRecord
from harness.report.check_records import check_names, checks_by_name, verdict_of
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table
from harness.scenarios.template_contracts import CheckVerdict

PREFIXES = ("template_contracts.",)
ORDER = ("double_bos", "system_role", "alternation", "tools_kwarg", "enable_thinking_kwarg")
VERDICT_CSS = {
    CheckVerdict.PASS: "st-passed",
    CheckVerdict.WARN: "st-xfailed",
    CheckVerdict.FAIL: "st-failed",
    CheckVerdict.NOT_APPLICABLE: "st-skipped",
}


@dataclass(frozen=True)
class Finding:
    model: str
    check: str
    verdict: str
    outcome: str
    evidence: str


@dataclass(frozen=True)
class TemplateContracts:
    table: Table  # check x model
    findings: tuple[Finding, ...]  # every fail, then every warn


def _cell(entry: Mapping[str, Any] | None) -> Cell:
    verdict = verdict_of(entry, CheckVerdict)
    if entry is None or verdict is None:
        return Cell("—")
    outcome = str(entry.get("outcome", ""))
    text = (
        verdict.value
        if verdict in (CheckVerdict.PASS, CheckVerdict.NOT_APPLICABLE)
        else (verdict.value.upper())
    )
    return Cell(
        text,
        note=outcome or None,
        title=str(entry.get("evidence", "")) or None,
        css=VERDICT_CSS[verdict],
    )


def build(run: RunRecord) -> TemplateContracts | None:
    cases = [r for r in run.results if r.scenario == "template_contracts" and checks_by_name(r)]
    if not cases:
        return None
    per_case = [checks_by_name(r) for r in cases]
    names = check_names(per_case, ORDER)
    columns = (Column("check", css="nowrap"), *(Column(r.model) for r in cases))
    rows = tuple((Cell(name), *(_cell(checks.get(name)) for checks in per_case)) for name in names)
    findings = [
        Finding(
            result.model,
            name,
            verdict.value,
            str(entry.get("outcome", "")),
            str(entry.get("evidence", "")),
        )
        for wanted in (CheckVerdict.FAIL, CheckVerdict.WARN)
        for result, checks in zip(cases, per_case, strict=True)
        for name in names
        if (entry := checks.get(name)) is not None
        and (verdict := verdict_of(entry, CheckVerdict)) is wanted
    ]
    return TemplateContracts(Table(columns, rows), tuple(findings))


SECTION = Section(
    "template_contracts", "Template contracts", build, claims=PREFIXES, order=METRICS + 100
)
