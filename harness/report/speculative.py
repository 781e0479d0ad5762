"""Speculative decoding section: one row per drafted case, in process (``speculative``) and over
HTTP (``http_speculative``): the draft, how many of its tokens were accepted, the speed-up
against the same model without the draft measured side by side, decode and TTFT with and
without, and whether greedy output stayed the same (a changed token fails the case)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from harness.core.metrics import MetricSpec
from harness.core.types import CaseResult, RunRecord, Status
from harness.report.formatting import MISSING, Scale, choose_scale, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table, metric_cell, stats
from harness.scenarios import http_speculative as served
from harness.scenarios import speculative as local
from harness.scenarios.draft_checks import SpeculativeArtifacts

SCENARIOS = (local.SCENARIO.name, served.SCENARIO.name)


@dataclass(frozen=True)
class Speculative:
    table: Table


def _acceptance(result: CaseResult, found: SpeculativeArtifacts, spec_name: str) -> Cell:
    accepted = found.total(found.accepted_tokens)
    drafted = found.total(found.drafted_tokens)
    metric = result.metric(spec_name)
    if metric is None or accepted is None or drafted is None:
        source = found.acceptance_source
        return Cell("not reported" if source else MISSING, title=source or "not measured")
    rate = stats(metric).median
    shown = f"{rate:.2f}" if math.isfinite(rate) else MISSING
    return Cell(shown, sort=rate, note=f"{accepted} of {drafted} drafted")


def _same(result: CaseResult, found: SpeculativeArtifacts) -> Cell:
    if result.status is Status.FAILED and found.first_mismatch:
        return Cell("❌ changed", css="st-failed", title=str(found.first_mismatch))
    if not result.metrics:
        return Cell(MISSING)
    if found.unchecked_baseline is not None:
        return Cell("not checked", css="dim", title=found.unchecked_baseline)
    return Cell("✅ same")


def _where(result: CaseResult, found: SpeculativeArtifacts) -> str:
    engine = found.engine
    return engine if result.scenario == served.SCENARIO.name and engine else "in process"


@dataclass(frozen=True)
class Specs:
    """The metrics a speculative scenario measures, by role."""

    acceptance: MetricSpec
    speedup: MetricSpec
    decode: MetricSpec
    baseline_decode: MetricSpec
    ttft: MetricSpec
    baseline_ttft: MetricSpec


SPECS: Mapping[str, Specs] = {
    local.SCENARIO.name: Specs(
        local.ACCEPTANCE,
        local.SPEEDUP,
        local.DECODE,
        local.BASELINE_DECODE,
        local.TTFT,
        local.BASELINE_TTFT,
    ),
    served.SCENARIO.name: Specs(
        served.ACCEPTANCE,
        served.SPEEDUP,
        served.DECODE,
        served.BASELINE_DECODE,
        served.TTFT,
        served.BASELINE_TTFT,
    ),
}


def _pair(result: CaseResult, names: tuple[str, str], scale: Scale) -> Cell:
    """Medians with and without the draft, in one unit."""
    first, second = (metric_cell(result.metric(n), scale, spread=False) for n in names)
    if not first.text and not second.text:
        return Cell("")
    return Cell(f"{first.text or MISSING} / {second.text or MISSING}", sort=first.sort)


def build(run: RunRecord) -> Speculative | None:
    results = [r for r in run.results if r.scenario in SCENARIOS]
    if not results:
        return None

    def medians(role: Callable[[Specs], MetricSpec]) -> list[float]:
        out = []
        for r in results:
            metric = r.metric(role(SPECS[r.scenario]).name)
            if metric is not None:
                out.append(stats(metric).median)
        return out

    decode = choose_scale(
        local.DECODE.unit,
        medians(lambda s: s.decode) + medians(lambda s: s.baseline_decode),
    )
    ttft = choose_scale(
        local.TTFT.unit, medians(lambda s: s.ttft) + medians(lambda s: s.baseline_ttft)
    )
    columns = (
        Column("model", css="nowrap"),
        Column("engine"),
        Column("draft"),
        Column("status"),
        Column("acceptance", numeric=True, title="draft tokens accepted / proposed"),
        Column(
            "speed-up (x)",
            numeric=True,
            title="without the draft / with it, same prompt, same run (in process: end to end; "
            "over HTTP: decode)",
        ),
        Column(f"decode with / without ({decode.label})", numeric=True),
        Column(f"TTFT with / without ({ttft.label})", numeric=True),
        Column("greedy output", title="the same tokens with the draft as without it"),
    )
    rows = []
    for result in sorted(results, key=lambda r: (r.model, r.scenario)):
        spec = SPECS[result.scenario]
        found = SpeculativeArtifacts.of(result)
        draft = found.draft
        tokens = result.params.get("num_draft_tokens") or found.num_draft_tokens
        rows.append(
            (
                Cell(result.model),
                Cell(_where(result, found)),
                Cell(
                    draft.rsplit("/", 1)[-1] if draft else MISSING,
                    title=draft or "",
                    note=f"{tokens} a round" if isinstance(tokens, int) else None,
                ),
                Cell(status_label(result.status), css=status_css(result.status)),
                _acceptance(result, found, spec.acceptance.name),
                metric_cell(result.metric(spec.speedup.name), choose_scale(spec.speedup.unit, [])),
                _pair(result, (spec.decode.name, spec.baseline_decode.name), decode),
                _pair(result, (spec.ttft.name, spec.baseline_ttft.name), ttft),
                _same(result, found),
            )
        )
    return Speculative(Table(columns, tuple(rows)))


SECTION = Section(
    "speculative",
    "Speculative decoding",
    build,
    claims=(f"{local.SCENARIO.name}.", f"{served.SCENARIO.name}."),
    order=METRICS + 160,
)
