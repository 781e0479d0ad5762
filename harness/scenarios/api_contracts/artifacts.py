"""What an ``api_contracts`` case records beside its metrics that the report reads, typed:
each check's record (:meth:`harness.scenarios.api_contracts.verdicts.CheckResult.record`)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenarios.artifacts import ScenarioArtifacts


@dataclass(frozen=True)
class ExchangeRecord:
    """One request and what the server answered (untrusted: escaped by reports)."""

    request: str = ""
    response: str = ""


@dataclass(frozen=True)
class ApiCheckRecord:
    name: str
    verdict: str | None = None  # a Verdict value
    reason: str = ""
    evidence: tuple[ExchangeRecord, ...] = ()


@dataclass(frozen=True)
class ApiContractsArtifacts(ScenarioArtifacts):
    engine: str | None = None
    checks: tuple[ApiCheckRecord, ...] = ()
