"""Speech section: per model and clip set, the real-time factor, WER and CER of
``speech_to_text`` cases, the long-form clip's WER, and each clip transcribed with errors
(reference and transcript side by side; transcripts are model output, escaped by the
templates like every cell)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.report.formatting import MISSING, choose_scale
from harness.report.sections import Section
from harness.report.table import (
    CASE_COLUMNS,
    Cell,
    Column,
    Table,
    case_cells,
    find_metric,
    metric_cell,
)
from harness.scenarios import speech_to_text as stt
from harness.types import CaseResult, RunRecord, Unit

SCENARIO = "speech_to_text"


@dataclass(frozen=True)
class Speech:
    summary: Table
    misses: Table


def percent(value: float | None) -> Cell:
    if value is None or not math.isfinite(value):
        return Cell(MISSING)
    return Cell(f"{100 * value:.1f}%", sort=value)


def _items(result: CaseResult) -> list[Mapping[str, Any]]:
    items = result.artifacts.get("items")
    if not isinstance(items, list):
        return []
    return [i for i in items if isinstance(i, Mapping)]


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _long_form_wer(result: CaseResult) -> float | None:
    rates = [_number(i.get("wer")) for i in _items(result) if i.get("long_form") is True]
    return rates[0] if rates else None


def _single(result: CaseResult, name: str) -> float | None:
    metric = result.metric(name)
    return metric.samples[0] if metric is not None and metric.samples else None


SUMMARY_COLUMNS = (
    Column("clips", numeric=True, title="clips in the set (the long-form one included)"),
    Column("audio", numeric=True, title="seconds of speech in the set"),
    Column("RTF", numeric=True, title="real-time factor per clip: transcribe time / audio"),
    Column("WER", numeric=True, title="word errors of all clips / their words (normalised)"),
    Column("CER", numeric=True, title="character errors of all clips / their characters"),
    Column("long-form WER", numeric=True, title="WER of the clip over 30 s"),
)


def summary_table(results: list[CaseResult]) -> Table:
    rtf_scale = choose_scale(Unit.RATIO, [])
    rows = []
    for result in results:
        audio = _single(result, stt.AUDIO.name)
        rows.append(
            (
                *case_cells(result),
                Cell(str(len(_items(result))), sort=len(_items(result))),
                Cell(f"{audio:.1f} s", sort=audio) if audio is not None else Cell(MISSING),
                metric_cell(find_metric(result, (stt.RTF.name,)), rtf_scale),
                percent(_single(result, stt.CORPUS_WER.name)),
                percent(_single(result, stt.CORPUS_CER.name)),
                percent(_long_form_wer(result)),
            )
        )
    return Table((*CASE_COLUMNS, *SUMMARY_COLUMNS), tuple(rows))


def misses_table(results: list[CaseResult]) -> Table:
    rows = []
    for result in results:
        for item in _items(result):
            wer = _number(item.get("wer"))
            if wer is None or wer == 0:
                continue
            rows.append(
                (
                    Cell(result.model),
                    Cell(str(result.artifacts.get("clip_set", MISSING))),
                    Cell(str(item.get("id", MISSING))),
                    percent(wer),
                    Cell(str(item.get("reference", ""))),
                    Cell(str(item.get("hypothesis", ""))),
                )
            )
    columns = (
        Column("model", css="nowrap"),
        Column("clip set", css="nowrap"),
        Column("clip", css="nowrap"),
        Column("WER", numeric=True),
        Column("reference"),
        Column("transcript", title="model output, greedy"),
    )
    return Table(columns, tuple(rows))


def build(run: RunRecord) -> Speech | None:
    results = [r for r in run.results if r.scenario == SCENARIO and r.metrics]
    if not results:
        return None
    return Speech(summary_table(results), misses_table(results))


SECTION = Section("audio", "Speech to text", build, claims=(stt.PREFIX,))
