"""Speech section: per model and clip set, the real-time factor, WER and CER of
``speech_to_text`` cases, the long-form clip's WER, and each clip transcribed with errors
(reference and transcript side by side; transcripts are model output, escaped by the
templates like every cell); per text-to-speech model, the real-time factor, time to first
audio, output rate and the round-trip WER of ``text_to_speech`` cases."""

from __future__ import annotations

import math
from dataclasses import dataclass

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
        found = stt.SpeechToTextArtifacts.of(result)
        audio = _single(result, stt.AUDIO.name)
        rows.append(
            (
                *case_cells(result),
                Cell(str(len(found.items)), sort=len(found.items)),
                Cell(f"{audio:.1f} s", sort=audio) if audio is not None else Cell(MISSING),
                metric_cell(find_metric(result, (stt.RTF.name,)), rtf_scale),
                percent(_single(result, stt.CORPUS_WER.name)),
                percent(_single(result, stt.CORPUS_CER.name)),
                percent(found.long_form_wer()),
            )
        )
    return Table((*CASE_COLUMNS, *SUMMARY_COLUMNS), tuple(rows))


def misses_table(results: list[CaseResult]) -> Table:
    rows = []
    for result in results:
        found = stt.SpeechToTextArtifacts.of(result)
        for item in found.items:
            if item.wer is None or item.wer == 0:
                continue
            rows.append(
                (
                    Cell(result.model),
                    Cell(found.clip_set or MISSING),
                    Cell(item.id or MISSING),
                    percent(item.wer),
                    Cell(item.reference),
                    Cell(item.hypothesis),
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
        found = tts.TextToSpeechArtifacts.of(result)
        rate = found.sample_rate
        rows.append(
            (
                *case_cells(result),
                Cell(str(len(found.items)), sort=len(found.items)),
                Cell(f"{rate:.0f} Hz", sort=rate) if rate else Cell(MISSING),
                Cell(MISSING if found.streams is None else "yes" if found.streams else "no"),
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
