"""Speculative decoding section: one row per drafted case, in process (``speculative``) and over
HTTP (``http_speculative``): the draft, how many of its tokens were accepted, the speed-up
against the same model without the draft measured side by side, decode and TTFT with and
without, and whether greedy output stayed the same (a changed token fails the case)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.core.types import CaseResult, RunRecord, Status
from harness.report.formatting import MISSING, Scale, choose_scale, status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table, metric_cell, stats
from harness.scenarios import http_speculative as served
from harness.scenarios import speculative as local

SCENARIOS = (local.SCENARIO.name, served.SCENARIO.name)


@dataclass(frozen=True)
class Speculative:
    table: Table


def _counts(values: object) -> int | None:
    if not isinstance(values, list):
        return None
    found = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    return sum(found) if found else None


def _acceptance(result: CaseResult, spec_name: str) -> Cell:
    accepted = _counts(result.artifacts.get("accepted_tokens"))
    drafted = _counts(result.artifacts.get("drafted_tokens"))
    metric = result.metric(spec_name)
    if metric is None or accepted is None or drafted is None:
        source = result.artifacts.get("acceptance_source")
        why = str(source) if isinstance(source, str) else "not measured"
        return Cell("not reported" if source else MISSING, title=why)
    rate = stats(metric).median
    shown = f"{rate:.2f}" if math.isfinite(rate) else MISSING
    return Cell(shown, sort=rate, note=f"{accepted} of {drafted} drafted")


def _same(result: CaseResult) -> Cell:
    mismatch = result.artifacts.get("first_mismatch")
    if result.status is Status.FAILED and mismatch:
        return Cell("❌ changed", css="st-failed", title=str(mismatch))
    if not result.metrics:
        return Cell(MISSING)
    baseline = result.artifacts.get("baseline")
    if isinstance(baseline, str) and baseline.startswith("none"):
        return Cell("not checked", css="dim", title=baseline)
    return Cell("✅ same")


def _where(result: CaseResult) -> str:
    engine = result.artifacts.get("engine")
    return str(engine) if result.scenario == served.SCENARIO.name and engine else "in process"


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
    specs = {local.SCENARIO.name: local, served.SCENARIO.name: served}

    def found(attr: str) -> list[float]:
        out = []
        for r in results:
            metric = r.metric(getattr(specs[r.scenario], attr).name)
            if metric is not None:
                out.append(stats(metric).median)
        return out

    decode = choose_scale(local.DECODE.unit, found("DECODE") + found("BASELINE_DECODE"))
    ttft = choose_scale(local.TTFT.unit, found("TTFT") + found("BASELINE_TTFT"))
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
        spec = specs[result.scenario]
        draft = result.artifacts.get("draft")
        tokens = result.params.get("num_draft_tokens") or result.artifacts.get("num_draft_tokens")
        rows.append(
            (
                Cell(result.model),
                Cell(_where(result)),
                Cell(
                    str(draft).rsplit("/", 1)[-1] if draft else MISSING,
                    title=str(draft or ""),
                    note=f"{tokens} a round" if isinstance(tokens, int) else None,
                ),
                Cell(status_label(result.status), css=status_css(result.status)),
                _acceptance(result, spec.ACCEPTANCE.name),
                metric_cell(result.metric(spec.SPEEDUP.name), choose_scale(spec.SPEEDUP.unit, [])),
                _pair(result, (spec.DECODE.name, spec.BASELINE_DECODE.name), decode),
                _pair(result, (spec.TTFT.name, spec.BASELINE_TTFT.name), ttft),
                _same(result),
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
