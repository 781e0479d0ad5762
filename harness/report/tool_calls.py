"""Tool-calls section: parser x model, accuracy per category and failure classes of the
``tool_calls`` cases, each miss with the raw output and what the parser made of it, and the
corpus layer's accuracy per parser implementation (``toolcalls_corpus`` cases).

Everything here comes from the cases' artifacts; model output stays raw text in the data and
is escaped by the templates like every other value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.metrics import MetricSpec
from harness.core.types import CaseResult, RunRecord
from harness.report.formatting import status_css, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table, find_metric, stats
from harness.scenarios import tool_calls as tc
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


def _template_cell(artifacts: Mapping[str, Any]) -> Cell:
    name = str(artifacts.get("chat_template") or "model")
    sha = artifacts.get("chat_template_sha256")
    return Cell(name, note=f"sha256 {str(sha)[:12]}" if sha else None, title=str(sha or ""))


def _parser_row(result: CaseResult) -> tuple[Cell, ...]:
    a = result.artifacts
    parser = a.get("parser")
    prompts = _value(result, tc.PROMPTS)
    markup = _value(result, tc.MARKUP)
    n = int(prompts) if prompts is not None else None
    return (
        Cell(result.model),
        Cell(_case(result)),
        _template_cell(a),
        Cell("yes" if a.get("fewshot") else "no" if "fewshot" in a else "—"),
        Cell(str(parser) if parser else "none inferred", css=None if parser else "st-skipped"),
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
    scores = result.artifacts.get("categories") or {}
    cells = []
    for category in Category:
        entry = scores.get(category.value)
        if not isinstance(entry, Mapping) or not entry.get("prompts"):
            cells.append(Cell("—"))
            continue
        ok, n = int(entry.get("ok", 0)), int(entry["prompts"])
        cells.append(Cell(f"{ok}/{n}", sort=ok / n, note=f"{ok / n:.0%}"))
    total = sum(int(e.get("prompts", 0)) for e in scores.values() if isinstance(e, Mapping))
    ok = sum(int(e.get("ok", 0)) for e in scores.values() if isinstance(e, Mapping))
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
    counts = result.artifacts.get("failure_counts") or {}
    cells = [
        Cell(str(int(counts.get(f.value, 0))), sort=int(counts.get(f.value, 0))) for f in CLASSES
    ]
    return (Cell(result.model), Cell(_case(result)), *cells)


CLASS_COLUMNS = (
    Column("model", css="nowrap"),
    Column("case"),
    *(Column(f.value, numeric=True) for f in CLASSES),
)


def _calls_text(calls: Any) -> str:
    """``name({"arg": value})`` per call, ``none`` when there is none."""
    shown = [
        f"{c.get('name')}({json.dumps(c.get('arguments'), ensure_ascii=False)})"
        for c in (calls if isinstance(calls, list) else [])
        if isinstance(c, Mapping)
    ]
    return "; ".join(shown) or "none"


def _parsed(record: Mapping[str, Any], prefix: str = "") -> str:
    crash = record.get(f"{prefix}crash")
    if crash:
        return f"request fails: {crash}"
    lines = [f"calls: {_calls_text(record.get(f'{prefix}calls'))}"]
    content = record.get(f"{prefix}content")
    if content:
        lines.append(f"content: {content}")
    if not prefix:
        lines += [f"dropped: {error}" for error in record.get("errors") or ()]
    return "\n".join(lines)


def _clip(text: str, limit: int = RAW_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _misses(result: CaseResult) -> CaseMisses | None:
    records = [r for r in result.artifacts.get("prompts") or () if isinstance(r, Mapping)]
    wrong = [r for r in records if r.get("failure") != CallFailure.OK.value or not r.get("parity")]
    if not wrong:
        return None
    shown = tuple(
        Miss(
            prompt=str(r.get("id", "?")),
            category=str(r.get("category", "")),
            failure=str(r.get("failure", "")),
            detail=str(r.get("detail", ""))
            + (" (cut at the token limit)" if r.get("finish_reason") == "length" else ""),
            question=str(r.get("question", "")),
            raw=_clip(str(r.get("raw", ""))),
            parsed=_clip(_parsed(r)),
            streamed=None if r.get("parity", True) else _clip(_parsed(r, "stream_")),
        )
        for r in wrong[:FAILURES_PER_CASE]
    )
    return CaseMisses(_label(result), shown, max(0, len(wrong) - FAILURES_PER_CASE))


def _corpus_rows(results: Sequence[CaseResult]) -> tuple[tuple[Cell, ...], ...]:
    rows = []
    for result in results:
        for entry in result.artifacts.get("implementations") or ():
            if not isinstance(entry, Mapping):
                continue
            cases, ok = int(entry.get("cases", 0)), int(entry.get("ok", 0))
            failures = entry.get("failures") or {}
            top = ", ".join(f"{k} {v}" for k, v in sorted(failures.items(), key=lambda kv: -kv[1]))
            rows.append(
                (
                    Cell(str(entry.get("parser", "?"))),
                    Cell(str(cases), sort=cases),
                    Cell(str(ok), sort=ok),
                    Cell(f"{ok / cases:.1%}" if cases else "—", sort=ok / cases if cases else None),
                    Cell(str(entry.get("known_broken", 0)), sort=int(entry.get("known_broken", 0))),
                    Cell(str(entry.get("unexpected", 0)), sort=int(entry.get("unexpected", 0))),
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
    scored = [r for r in live if r.artifacts.get("categories")]
    return ToolCalls(
        parsers=Table(PARSER_COLUMNS, tuple(_parser_row(r) for r in live)),
        categories=Table(CATEGORY_COLUMNS, tuple(_category_row(r) for r in scored)),
        classes=Table(CLASS_COLUMNS, tuple(_classes_row(r) for r in scored)),
        misses=tuple(m for m in (_misses(r) for r in scored) if m is not None),
        corpus=Table(CORPUS_COLUMNS, _corpus_rows([r for r in corpus if r.artifacts])),
    )


SECTION = Section("tool_calls", "Tool calls", build, claims=PREFIXES, order=METRICS + 190)
