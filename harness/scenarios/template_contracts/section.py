"""Template contracts section: check x model (the ``template_contracts`` cases), each cell the
verdict and its one-word outcome (supported, folded, dropped, ignored, ...), then every
failure and warning with its evidence (the rendered prompt, shortened).

Everything comes from the cases' check records (:class:`TemplateContractsArtifacts`).
Evidence is rendered template output: raw text in the data, escaped by the templates like every
other value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.core.types import RunRecord
from harness.report.check_records import check_names, checks_by_name, verdict_of
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table
from harness.scenarios.template_contracts import (
    CheckVerdict,
    TemplateCheckRecord,
    TemplateContractsArtifacts,
)

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


def _cell(entry: TemplateCheckRecord | None) -> Cell:
    verdict = verdict_of(entry, CheckVerdict)
    if entry is None or verdict is None:
        return Cell("—")
    outcome = entry.outcome
    text = (
        verdict.value
        if verdict in (CheckVerdict.PASS, CheckVerdict.NOT_APPLICABLE)
        else (verdict.value.upper())
    )
    return Cell(
        text,
        note=outcome or None,
        title=entry.evidence or None,
        css=VERDICT_CSS[verdict],
    )


def build(run: RunRecord) -> TemplateContracts | None:
    found = [
        (r, checks_by_name(TemplateContractsArtifacts.of(r).checks))
        for r in run.results
        if r.scenario == "template_contracts"
    ]
    found = [(r, checks) for r, checks in found if checks]
    if not found:
        return None
    cases = [r for r, _ in found]
    per_case = [checks for _, checks in found]
    names = check_names(per_case, ORDER)
    columns = (Column("check", css="nowrap"), *(Column(r.model) for r in cases))
    rows = tuple((Cell(name), *(_cell(checks.get(name)) for checks in per_case)) for name in names)
    findings = [
        Finding(
            result.model,
            name,
            verdict.value,
            entry.outcome,
            entry.evidence,
        )
        for wanted in (CheckVerdict.FAIL, CheckVerdict.WARN)
        for result, checks in zip(cases, per_case, strict=True)
        for name in names
        if (entry := checks.get(name)) is not None
        and (verdict := verdict_of(entry, CheckVerdict)) is wanted
    ]
    return TemplateContracts(Table(columns, rows), tuple(findings))


SECTION = Section(
    "template_contracts",
    "Template contracts",
    build,
    claims=PREFIXES,
    order=METRICS + 100,
    templates=Path(__file__).parent,
)
