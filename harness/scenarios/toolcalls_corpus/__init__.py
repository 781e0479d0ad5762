"""``toolcalls_corpus``: the tool-call corpus scored through the installed parsers, in a run.

The same scoring as ``mlx-harness toolcalls score`` (the corpus layer), put in a run so the
report can show each parser's accuracy next to the live results. It uses no model: attach it
to any model of the suite (the worker is only where it runs, so the package versions are the
run's own). The case fails when a case not recorded as known broken fails, as the command does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.probe.types import Capability
from harness.scenarios.artifacts import ScenarioArtifacts
from harness.scenarios.base import BaseScenario, Params, ScenarioContext, ScenarioOutput, metric
from harness.toolcalls import shipped

ACCURACY = MetricSpec(
    "toolcalls_corpus.accuracy", Unit.RATIO, True, "corpus cases parsed right / cases scored"
)
SCORED = MetricSpec(
    "toolcalls_corpus.scored", Unit.COUNT, True, "case x parser implementation pairs scored"
)
KNOWN = MetricSpec(
    "toolcalls_corpus.known_broken", Unit.COUNT, False, "failures recorded as known parser bugs"
)
UNEXPECTED = MetricSpec(
    "toolcalls_corpus.unexpected", Unit.COUNT, False, "failures not recorded as known bugs"
)


class CorpusParams(Params):
    corpus: str | None = Field(None, description="corpus directory (default: the shipped one)")
    parser: str = Field("auto", description="auto: each case's own parser; or a format name")


class ToolcallsCorpusScenario(BaseScenario[CorpusParams]):
    name: ClassVar[str] = "toolcalls_corpus"
    measures_time: ClassVar[bool] = False  # parser scores over a fixed corpus
    version: ClassVar[int] = 1
    params_model = CorpusParams
    needs: ClassVar[frozenset[Capability]] = frozenset()
    metrics: ClassVar[tuple[MetricSpec, ...]] = (ACCURACY, SCORED, KNOWN, UNEXPECTED)

    def run(self, ctx: ScenarioContext, params: CorpusParams) -> ScenarioOutput:
        from harness.toolcalls.corpus import load_corpus
        from harness.toolcalls.scorer import score_corpus

        root = Path(params.corpus) if params.corpus else shipped.data_root()
        # the corpus is the *.jsonl files; the live prompts and templates are YAML and Jinja
        score = score_corpus(
            load_corpus([root]), None if params.parser == "auto" else params.parser
        )
        rows: list[dict[str, Any]] = [
            {
                "parser": row.implementation,
                "cases": row.cases,
                "ok": row.ok,
                "known_broken": row.known_broken,
                "unexpected": sum(
                    1 for r in score.unexpected if r.implementation == row.implementation
                ),
                "failures": {f.value: n for f, n in row.counts if n},
            }
            for row in score.per_implementation()
        ]
        total = len(score.results)
        ok = sum(1 for r in score.results if r.passed)
        known = sum(1 for r in score.results if not r.passed and r.known_broken)
        unexpected = [
            f"{r.implementation} {r.case.id}: {r.failure.value}: {r.verdict.detail}"
            for r in score.unexpected
        ]
        artifacts = {
            "corpus": str(root),
            "implementations": rows,
            "unexpected": unexpected,
            "fixed": [f"{r.implementation} {r.case.id}" for r in score.fixed],
            "skipped": list(score.skipped),
        }
        metrics = (
            metric(ACCURACY, [ok / total if total else 0.0]),
            metric(SCORED, [float(total)]),
            metric(KNOWN, [float(known)]),
            metric(UNEXPECTED, [float(len(unexpected))]),
        )
        failures = (
            (f"{len(unexpected)} corpus failures not recorded as known: {unexpected[0]}",)
            if unexpected
            else ()
        )
        return ScenarioOutput(metrics, artifacts, failures=failures)


@dataclass(frozen=True)
class Implementation:
    """One parser implementation's score over the corpus."""

    parser: str = "?"
    cases: int = 0
    ok: int = 0
    known_broken: int = 0  # failures recorded as known parser bugs
    unexpected: int = 0  # failures not recorded: these fail the case
    failures: dict[str, int] | None = None  # by failure class


@dataclass(frozen=True)
class CorpusArtifacts(ScenarioArtifacts):
    """What a ``toolcalls_corpus`` case records beside its metrics."""

    corpus: str | None = None
    implementations: tuple[Implementation, ...] = ()


SCENARIO = ToolcallsCorpusScenario()
