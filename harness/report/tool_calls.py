"""Tool-calls section: parser x model, accuracy per category and failure classes of the
``tool_calls`` cases, each miss with the raw output and what the parser made of it, and the
corpus layer's accuracy per parser implementation (``toolcalls_corpus`` cases).

Everything here comes from the cases' typed artifacts (``ToolCallsArtifacts``,
``CorpusArtifacts``); model output stays raw text in the data and
is escaped by the templates like every other value.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from harness.core.metrics import MetricSpec
from harness.core.types import CaseResult, RunRecord
from harness.report.formatting import status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table, find_metric, stats
from harness.scenarios import tool_calls as tc
from harness.scenarios.toolcalls_corpus import CorpusArtifacts
from harness.toolcalls.classify import CallFailure
from harness.toolcalls.live import Category

PREFIXES = ("tool_calls.", "toolcalls_corpus.")
RAW_LIMIT = 800  # characters of raw output shown per failure
FAILURES_PER_CASE = 40


@dataclass(frozen=True)
class Miss:
    prompt: str
    category: str
    failure: str
    detail: str
    question: str
    raw: str
    parsed: str  # what the non-streamed response carried: calls, content, errors
    streamed: str | None  # the streamed response, when it differs


@dataclass(frozen=True)
class CaseMisses:
    label: str  # "model · params"
    misses: tuple[Miss, ...]
    more: int  # misses left out (see run.jsonl)


@dataclass(frozen=True)
class ToolCalls:
    parsers: Table
    categories: Table
    classes: Table
    misses: tuple[CaseMisses, ...]
    corpus: Table


def _share(metric_value: float | None, of: int | None = None) -> Cell:
    if metric_value is None:
        return Cell("—")
    text = f"{metric_value:.0%}" if of is None else f"{round(metric_value * of)}/{of}"
    return Cell(text, sort=metric_value)


def _value(result: CaseResult, spec: MetricSpec) -> float | None:
    found = find_metric(result, (spec.name,))
    if found is None:
        return None
    median = stats(found).median
    return None if median != median else median  # NaN -> None


def _count(result: CaseResult, spec: MetricSpec) -> Cell:
    value = _value(result, spec)
    return Cell("—") if value is None else Cell(str(int(value)), sort=value)


def _case(result: CaseResult) -> str:
    """The case's own part of its id: the scenario (or its ``id:``) and the swept point."""
    return result.case_id.rsplit("::", 1)[-1]


def _label(result: CaseResult) -> str:
    return f"{result.model} · {_case(result)}"


def _template_cell(found: tc.ToolCallsArtifacts) -> Cell:
    sha = found.chat_template_sha256
    return Cell(
        found.chat_template or "model", note=f"sha256 {sha[:12]}" if sha else None, title=sha or ""
    )


def _fewshot(found: tc.ToolCallsArtifacts) -> str:
    return "—" if found.fewshot is None else "yes" if found.fewshot else "no"


def _parser_row(result: CaseResult) -> tuple[Cell, ...]:
    found = tc.ToolCallsArtifacts.of(result)
    parser = found.parser
    prompts = _value(result, tc.PROMPTS)
    markup = _value(result, tc.MARKUP)
    n = int(prompts) if prompts is not None else None
    return (
        Cell(result.model),
        Cell(_case(result)),
        _template_cell(found),
        Cell(_fewshot(found)),
        Cell(parser or "none inferred", css=None if parser else "st-skipped"),
        _count(result, tc.PROMPTS),
        _count(result, tc.MARKUP),
        _share(_value(result, tc.PARSE_SHARE), int(markup) if markup is not None else None),
        _share(_value(result, tc.PARITY), n),
        _count(result, tc.LEAKED),
        _count(result, tc.DROPPED),
        _count(result, tc.REQUEST_ERRORS),
        _share(_value(result, tc.ACCURACY)),
        Cell(status_label(result.status), css=status_css(result.status), note=result.reason),
    )


PARSER_COLUMNS = (
    Column("model", css="nowrap"),
    Column("case"),
    Column("chat template"),
    Column("few-shot"),
    Column("parser", title="the tool parser mlx-lm inferred from the chat template"),
    Column("prompts", numeric=True),
    Column("with markup", numeric=True, title="replies holding call markup"),
    Column("parse", numeric=True, title="replies with markup whose calls all parse"),
    Column("stream = non-stream", numeric=True, title="same calls streamed and not"),
    Column("leaked", numeric=True, title="replies with call markup in their content"),
    Column("dropped", numeric=True, title="calls the server failed to parse, silently"),
    Column("request errors", numeric=True, title="parsing raised: the request fails"),
    Column("accuracy", numeric=True),
    Column("status"),
)


def _category_row(result: CaseResult) -> tuple[Cell, ...]:
    scores = tc.ToolCallsArtifacts.of(result).categories or {}
    cells = []
    for category in Category:
        entry = scores.get(category.value)
        if entry is None or not entry.prompts:
            cells.append(Cell("—"))
            continue
        ok, n = entry.ok, entry.prompts
        cells.append(Cell(f"{ok}/{n}", sort=ok / n, note=f"{ok / n:.0%}"))
    total = sum(e.prompts for e in scores.values())
    ok = sum(e.ok for e in scores.values())
    overall = (
        Cell(f"{ok}/{total}", sort=ok / total, note=f"{ok / total:.0%}") if total else Cell("—")
    )
    return (Cell(result.model), Cell(_case(result)), *cells, overall)


CATEGORY_COLUMNS = (
    Column("model", css="nowrap"),
    Column("case"),
    *(Column(c.value, numeric=True) for c in Category),
    Column("overall", numeric=True),
)

CLASSES = tuple(f for f in CallFailure if f is not CallFailure.OK)


def _classes_row(result: CaseResult) -> tuple[Cell, ...]:
    counts = tc.ToolCallsArtifacts.of(result).failure_counts or {}
    cells = [Cell(str(counts.get(f.value, 0)), sort=counts.get(f.value, 0)) for f in CLASSES]
    return (Cell(result.model), Cell(_case(result)), *cells)


CLASS_COLUMNS = (
    Column("model", css="nowrap"),
    Column("case"),
    *(Column(f.value, numeric=True) for f in CLASSES),
)


def _calls_text(calls: tuple[tc.RecordedCall, ...]) -> str:
    """``name({"arg": value})`` per call, ``none`` when there is none."""
    shown = [f"{c.name}({json.dumps(c.arguments, ensure_ascii=False)})" for c in calls]
    return "; ".join(shown) or "none"


def _parsed(record: tc.PromptRecord, *, streamed: bool = False) -> str:
    crash = record.stream_crash if streamed else record.crash
    if crash:
        return f"request fails: {crash}"
    calls = record.stream_calls if streamed else record.calls
    lines = [f"calls: {_calls_text(calls)}"]
    content = record.stream_content if streamed else record.content
    if content:
        lines.append(f"content: {content}")
    if not streamed:
        lines += [f"dropped: {error}" for error in record.errors]
    return "\n".join(lines)


def _clip(text: str, limit: int = RAW_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _misses(result: CaseResult) -> CaseMisses | None:
    records = tc.ToolCallsArtifacts.of(result).prompts
    wrong = [r for r in records if r.failure != CallFailure.OK.value or not r.parity]
    if not wrong:
        return None
    shown = tuple(
        Miss(
            prompt=r.id,
            category=r.category,
            failure=r.failure,
            detail=r.detail + (" (cut at the token limit)" if r.finish_reason == "length" else ""),
            question=r.question,
            raw=_clip(r.raw),
            parsed=_clip(_parsed(r)),
            streamed=None if r.parity else _clip(_parsed(r, streamed=True)),
        )
        for r in wrong[:FAILURES_PER_CASE]
    )
    return CaseMisses(_label(result), shown, max(0, len(wrong) - FAILURES_PER_CASE))


def _corpus_rows(results: Sequence[CaseResult]) -> tuple[tuple[Cell, ...], ...]:
    rows = []
    for result in results:
        for entry in CorpusArtifacts.of(result).implementations:
            cases, ok = entry.cases, entry.ok
            failures = entry.failures or {}
            top = ", ".join(f"{k} {v}" for k, v in sorted(failures.items(), key=lambda kv: -kv[1]))
            rows.append(
                (
                    Cell(entry.parser),
                    Cell(str(cases), sort=cases),
                    Cell(str(ok), sort=ok),
                    Cell(f"{ok / cases:.1%}" if cases else "—", sort=ok / cases if cases else None),
                    Cell(str(entry.known_broken), sort=entry.known_broken),
                    Cell(str(entry.unexpected), sort=entry.unexpected),
                    Cell(top or "—"),
                )
            )
    return tuple(rows)


CORPUS_COLUMNS = (
    Column("parser implementation", css="nowrap"),
    Column("cases", numeric=True),
    Column("ok", numeric=True),
    Column("accuracy", numeric=True),
    Column("known broken", numeric=True, title="failures recorded as known parser bugs"),
    Column("unexpected", numeric=True, title="failures not recorded: these fail the case"),
    Column("failure classes"),
)


def build(run: RunRecord) -> ToolCalls | None:
    live = [r for r in run.results if r.scenario == "tool_calls"]
    corpus = [r for r in run.results if r.scenario == "toolcalls_corpus"]
    if not live and not corpus:
        return None
    scored = [r for r in live if tc.ToolCallsArtifacts.of(r).categories]
    return ToolCalls(
        parsers=Table(PARSER_COLUMNS, tuple(_parser_row(r) for r in live)),
        categories=Table(CATEGORY_COLUMNS, tuple(_category_row(r) for r in scored)),
        classes=Table(CLASS_COLUMNS, tuple(_classes_row(r) for r in scored)),
        misses=tuple(m for m in (_misses(r) for r in scored) if m is not None),
        corpus=Table(CORPUS_COLUMNS, _corpus_rows([r for r in corpus if r.artifacts])),
    )


SECTION = Section("tool_calls", "Tool calls", build, claims=PREFIXES, order=METRICS + 190)
