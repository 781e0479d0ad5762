"""Speech section: per model and clip set, the real-time factor, WER and CER of
``speech_to_text`` cases, the long-form clip's WER, and each clip transcribed with errors
(reference and transcript side by side; transcripts are model output, escaped by the
templates like every cell); per text-to-speech model, the real-time factor, time to first
audio, output rate and the round-trip WER of ``text_to_speech`` cases."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.core.types import CaseResult, RunRecord, Unit
from harness.report.formatting import MISSING, choose_scale
from harness.report.sections import METRICS, Section
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
from harness.scenarios import text_to_speech as tts

SCENARIO = "speech_to_text"
TTS_SCENARIO = "text_to_speech"


@dataclass(frozen=True)
class Speech:
    summary: Table | None  # speech to text
    misses: Table | None
    synthesis: Table | None = None  # text to speech


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


TTS_COLUMNS = (
    Column("sentences", numeric=True, title="sentences synthesised"),
    Column("rate", numeric=True, title="output sample rate"),
    Column("streams", title="yes: audio arrives while the model generates; no: per segment"),
    Column("audio", numeric=True, title="seconds of audio made for the sentences"),
    Column("RTF", numeric=True, title="real-time factor per sentence: synthesis time / audio"),
    Column("TTFA", numeric=True, title="time to the first audio chunk of a sentence"),
    Column(
        "round-trip WER",
        numeric=True,
        title="the reference Whisper's transcripts of the speech against the input text, "
        "all sentences pooled (random weights: ~100%)",
    ),
)


def synthesis_table(results: list[CaseResult]) -> Table:
    rtf_scale = choose_scale(Unit.RATIO, [])
    ttfa = [m for r in results if (m := r.metric(tts.TTFA.name)) is not None]
    ttfa_scale = choose_scale(Unit.SECONDS, [x for m in ttfa for x in m.samples])
    rows = []
    for result in results:
        audio = result.metric(tts.AUDIO.name)
        seconds = sum(audio.samples) if audio is not None else None
        rate = _number(result.artifacts.get("sample_rate"))
        streams = result.artifacts.get("streams")
        rows.append(
            (
                *case_cells(result),
                Cell(str(len(_items(result))), sort=len(_items(result))),
                Cell(f"{rate:.0f} Hz", sort=rate) if rate else Cell(MISSING),
                Cell({True: "yes", False: "no"}.get(streams, MISSING))
                if isinstance(streams, bool)
                else Cell(MISSING),
                Cell(f"{seconds:.1f} s", sort=seconds) if seconds is not None else Cell(MISSING),
                metric_cell(find_metric(result, (tts.RTF.name,)), rtf_scale),
                metric_cell(find_metric(result, (tts.TTFA.name,)), ttfa_scale),
                percent(_single(result, tts.CORPUS_ROUND_TRIP_WER.name)),
            )
        )
    return Table((*CASE_COLUMNS, *TTS_COLUMNS), tuple(rows))


def build(run: RunRecord) -> Speech | None:
    results = [r for r in run.results if r.scenario == SCENARIO and r.metrics]
    synthesis = [r for r in run.results if r.scenario == TTS_SCENARIO and r.metrics]
    if not results and not synthesis:
        return None
    return Speech(
        summary_table(results) if results else None,
        misses_table(results) if results else None,
        synthesis_table(synthesis) if synthesis else None,
    )


SECTION = Section("audio", "Speech", build, claims=(stt.PREFIX, tts.PREFIX), order=METRICS + 210)
