"""API contracts section: check x server (the ``api_contracts`` cases) with pass, FAIL, n.a. or
not judged (the case's time ran out),
each failure with its reason and evidence (the requests as sent, excerpts of the answers), and
why the checks that cannot apply do not.

Everything comes from the cases' artifacts. The evidence holds the server's output: it stays
raw text in the data and is escaped by the templates like every other value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.core.types import CaseResult, RunRecord
from harness.report.check_records import check_names, checks_by_name, verdict_of
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table
from harness.scenarios.api_contracts.artifacts import ApiCheckRecord, ApiContractsArtifacts
from harness.scenarios.api_contracts.catalog import CHECKS
from harness.scenarios.api_contracts.verdicts import Verdict

PREFIXES = ("api_contracts.",)
EVIDENCE_CHARS = 1200  # per request or response shown
EVIDENCE_PER_FAILURE = 6
VERDICT_CSS = {
    Verdict.PASS: "st-passed",
    Verdict.FAIL: "st-failed",
    Verdict.NOT_APPLICABLE: "st-skipped",
    Verdict.UNJUDGED: "st-timed",
}


@dataclass(frozen=True)
class Evidence:
    request: str
    response: str


@dataclass(frozen=True)
class Finding:
    """One check's verdict on one server, with what backs it."""

    server: str
    check: str
    reason: str
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True)
class ApiContracts:
    table: Table  # check x server
    failures: tuple[Finding, ...]
    not_applicable: tuple[Finding, ...]
    unjudged: tuple[Finding, ...] = ()  # the case's time ran out before or during them


def _clip(text: str, limit: int = EVIDENCE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _server(result: CaseResult) -> str:
    case = result.case_id.rsplit("::", 1)[-1]
    engine = ApiContractsArtifacts.of(result).engine
    label = result.model if case == "api_contracts" else f"{result.model} · {case}"
    return f"{label} ({engine})" if engine else label


def _cell(entry: ApiCheckRecord | None) -> Cell:
    verdict = verdict_of(entry, Verdict)
    if entry is None or verdict is None:
        return Cell("—")
    return Cell(verdict.label, css=VERDICT_CSS[verdict], title=entry.reason)


def _finding(server: str, entry: ApiCheckRecord) -> Finding:
    evidence = tuple(
        Evidence(_clip(e.request), _clip(e.response)) for e in entry.evidence[:EVIDENCE_PER_FAILURE]
    )
    return Finding(server, entry.name, entry.reason, evidence)


def build(run: RunRecord) -> ApiContracts | None:
    found = [
        (r, checks_by_name(ApiContractsArtifacts.of(r).checks))
        for r in run.results
        if r.scenario == "api_contracts"
    ]
    found = [(r, checks) for r, checks in found if checks]
    if not found:
        return None
    cases = [r for r, _ in found]
    servers = [_server(r) for r in cases]
    per_case = [checks for _, checks in found]
    names = check_names(per_case, CHECKS)
    columns = (
        Column("check", css="nowrap"),
        Column("contract"),
        *(Column(s) for s in servers),
    )
    rows = tuple(
        (
            Cell(name),
            Cell(CHECKS[name].contract if name in CHECKS else ""),
            *(_cell(records.get(name)) for records in per_case),
        )
        for name in names
    )
    failures, skipped, unjudged = [], [], []
    for server, records in zip(servers, per_case, strict=True):
        for name in names:
            entry = records.get(name)
            verdict = verdict_of(entry, Verdict)
            if entry is not None and verdict is Verdict.FAIL:
                failures.append(_finding(server, entry))
            elif entry is not None and verdict is Verdict.NOT_APPLICABLE:
                skipped.append(Finding(server, name, entry.reason, ()))
            elif entry is not None and verdict is Verdict.UNJUDGED:
                unjudged.append(Finding(server, name, entry.reason, ()))
    return ApiContracts(Table(columns, rows), tuple(failures), tuple(skipped), tuple(unjudged))


SECTION = Section(
    "api_contracts",
    "API contracts",
    build,
    claims=PREFIXES,
    order=METRICS + 90,
    templates=Path(__file__).parent,
)
