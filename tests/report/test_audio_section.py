"""The speech section: RTF, WER, CER per model and clip set; transcripts escaped; text to
speech: RTF, TTFA, rate and round-trip WER per model."""

from __future__ import annotations

import dataclasses

from report_fixtures import EVIL, case, make_run, metric

from harness.core.types import CaseResult, Status, Unit
from harness.report import render_html, render_markdown
from harness.report.audio import build


def speech_case(model: str, clip_set: str, wers: list[float], hypothesis: str = "x") -> CaseResult:
    items = [
        {
            "id": f"s{i:02d}",
            "long_form": False,
            "reference": "ref",
            "hypothesis": hypothesis,
            "wer": w,
        }
        for i, w in enumerate(wers)
    ]
    items[-1]["long_form"] = True
    result = case(
        model,
        "speech_to_text",
        point={"clip_set": clip_set},
        metrics=[
            metric("speech_to_text.rtf", Unit.RATIO, 0.5, 0.7, 0.6),
            metric("speech_to_text.wer", Unit.RATIO, *wers),
            metric("speech_to_text.corpus_wer", Unit.RATIO, 0.25),
            metric("speech_to_text.corpus_cer", Unit.RATIO, 0.125),
            metric("speech_to_text.audio_s", Unit.SECONDS, 42.0),
        ],
    )
    return dataclasses.replace(result, artifacts={"clip_set": clip_set, "items": items})


def test_no_speech_cases_no_section() -> None:
    other = case("m", "throughput", metrics=[metric("throughput.ttft_s", Unit.SECONDS, 0.1)])
    skipped = case("w", "speech_to_text", Status.SKIPPED, reason="espeak-ng is not installed")
    assert build(make_run([other, skipped])) is None


def test_summary_row_per_model_and_clip_set() -> None:
    section = build(
        make_run(
            [
                speech_case("whisper", "clean", [0.0, 0.5, 0.2]),
                speech_case("whisper", "snr10", [0.4, 0.5, 0.6]),
            ]
        )
    )
    assert section is not None
    headers = [c.label for c in section.summary.columns]
    rows = [{h: c.text for h, c in zip(headers, row, strict=True)} for row in section.summary.rows]
    assert [r["params"] for r in rows] == ["clip_set=clean", "clip_set=snr10"]
    assert rows[0]["clips"] == "3" and rows[0]["audio"] == "42.0 s"
    assert rows[0]["RTF"].startswith("0.60")
    assert (rows[0]["WER"], rows[0]["CER"], rows[0]["long-form WER"]) == ("25.0%", "12.5%", "20.0%")
    misses = [(r[1].text, r[2].text, r[3].text) for r in section.misses.rows]
    assert misses[:2] == [("clean", "s01", "50.0%"), ("clean", "s02", "20.0%")]  # s00 had none
    assert len(misses) == 5


def test_hostile_transcript_is_escaped() -> None:
    run = make_run([speech_case("whisper", "clean", [1.0], hypothesis=EVIL)])
    html, md = render_html(run), render_markdown(run)
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    section = md.split("## Speech", 1)[1].split("\n## ", 1)[0]
    assert "<script>alert(1)" not in section and "Clips transcribed with errors" in section
    assert not any(line.startswith("second line") for line in section.splitlines())


def tts_case(model: str, streams: bool, round_trip: float) -> CaseResult:
    items = [{"id": f"s{i:02d}", "text": "ref", "transcript": "x", "wer": 1.0} for i in range(3)]
    result = case(
        model,
        "text_to_speech",
        metrics=[
            metric("text_to_speech.rtf", Unit.RATIO, 0.5, 0.7, 0.6),
            metric("text_to_speech.ttfa_s", Unit.SECONDS, 0.2, 0.3, 0.25),
            metric("text_to_speech.audio_s", Unit.SECONDS, 1.0, 2.0, 1.5),
            metric("text_to_speech.corpus_round_trip_wer", Unit.RATIO, round_trip),
        ],
    )
    artifacts = {"items": items, "sample_rate": 24000, "streams": streams}
    return dataclasses.replace(result, artifacts=artifacts)


def test_text_to_speech_row_per_model_without_speech_to_text() -> None:
    section = build(make_run([tts_case("kokoro", True, 0.125), tts_case("zoo", False, 1.0)]))
    assert section is not None and section.summary is None and section.misses is None
    assert section.synthesis is not None
    headers = [c.label for c in section.synthesis.columns]
    rows = [{h: c.text for h, c in zip(headers, r, strict=True)} for r in section.synthesis.rows]
    assert [(r["model"], r["streams"], r["round-trip WER"]) for r in rows] == [
        ("kokoro", "yes", "12.5%"),
        ("zoo", "no", "100.0%"),
    ]
    assert rows[0]["sentences"] == "3" and rows[0]["rate"] == "24000 Hz"
    assert rows[0]["audio"] == "4.5 s" and rows[0]["RTF"].startswith("0.60")
    md = render_markdown(make_run([tts_case("zoo", False, 1.0)]))
    speech = md.split("## Speech", 1)[1].split("\n## ", 1)[0]
    assert "Text to speech" in speech and "Clips transcribed with errors" not in speech


def test_both_directions_in_one_section() -> None:
    run = make_run([speech_case("whisper", "clean", [0.0, 0.5]), tts_case("zoo", False, 1.0)])
    section = build(run)
    assert section is not None and section.summary is not None and section.synthesis is not None
    md = render_markdown(run)
    assert md.count("## Speech") == 1
