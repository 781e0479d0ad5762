"""compare on per-item metrics, end to end on run records built from real Whisper tiny.en items.

``data/whisper_tiny_en_items.json`` holds what ``mlx-harness run`` of speech_to_text (8 espeak-ng
sentences, no long clip) recorded per clip on this Linux CPU for the clean set and at 5 dB SNR.
The planted degradation is the snr5 transcripts' scores put in a run of the clean clips (what a
model that hears the clean clips as badly as tiny.en hears noisy ones would record): the clip ids
and fingerprint are the clean run's, so the comparison pairs clip by clip.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from harness.core.metrics import MetricSpec
from harness.core.types import (
    CaseResult,
    Machine,
    Metric,
    ModelIdentity,
    RunRecord,
    Status,
    Verdict,
)
from harness.report.comparison_text import comparison_lines
from harness.results.compare import Method, compare_runs
from harness.scenarios.quality import AGREEMENT, KL, PERPLEXITY, REFERENCE_PERPLEXITY
from harness.scenarios.speech_to_text import CER, CORPUS_WER, RTF, WER

DATA = json.loads((Path(__file__).parent / "data" / "whisper_tiny_en_items.json").read_text())
MACHINE = Machine("Linux", "6", "x86_64", "cpu", 2, 1 << 34, "3.11", blas="openblas")
CASE = "audio::whisper-tiny-en::speech_to_text[clip_set=clean]"


def _case(items: list[dict[str, Any]], clips_sha256: str, rtf: tuple[float, ...]) -> CaseResult:
    return CaseResult(
        CASE,
        "audio",
        "whisper-tiny-en",
        "speech_to_text",
        Status.PASSED,
        params={"clip_set": "clean", "sentences": 8, "long_clip": False},
        metrics=(
            Metric(RTF.name, RTF.unit, rtf),
            Metric(WER.name, WER.unit, tuple(i["wer"] for i in items)),
            Metric(CER.name, CER.unit, tuple(i["cer"] for i in items)),
        ),
        artifacts={"clip_set": "clean", "clips_sha256": clips_sha256, "items": items},
    )


def _run(run_id: str, case: CaseResult) -> RunRecord:
    identity = ModelIdentity("whisper-tiny-en", "/m", "mlx_audio", config_sha256="c")
    return RunRecord(
        1,
        run_id,
        "2026-11-23",
        MACHINE,
        {"mlx": "0.32.4"},
        "sha",
        models={"whisper-tiny-en": identity},
        results=(case,),
    )


RTF_SAMPLES = (0.69, 0.72, 0.73, 0.89, 1.2, 1.61, 1.23, 0.63)
CLEAN = DATA["clip_sets"]["clean"]
SNR5 = DATA["clip_sets"]["snr5"]
BASELINE = _run("clean", _case(CLEAN["items"], CLEAN["clips_sha256"], RTF_SAMPLES))


def test_a_planted_degradation_is_regressed_by_the_paired_test() -> None:
    degraded = _run("degraded", _case(SNR5["items"], CLEAN["clips_sha256"], RTF_SAMPLES))
    case = compare_runs(BASELINE, degraded).cases[0]
    assert case.verdict is Verdict.REGRESSED
    wer = next(d for d in case.metrics if d.metric == WER.name)
    assert wer.verdict is Verdict.REGRESSED
    assert wer.method is Method.PAIRED_ITEMS
    assert wer.paired is not None
    assert (wer.paired.items, wer.paired.differing) == (8, 8)  # every clip worse at 5 dB
    assert wer.p_value == pytest.approx(2 / 2**8)  # the exact two-sided p of 8 of 8 one way
    assert wer.paired.median_difference == pytest.approx(0.4286, abs=1e-4)
    assert wer.ratio_ci is None  # no repeat bootstrap for items
    rtf = next(d for d in case.metrics if d.metric == RTF.name)
    assert rtf.method is Method.REPEATS and rtf.paired is None


def test_a_rerun_of_the_same_greedy_model_is_unchanged_not_inconclusive() -> None:
    rerun = _run("rerun", _case(CLEAN["items"], CLEAN["clips_sha256"], RTF_SAMPLES))
    case = compare_runs(BASELINE, rerun).cases[0]
    assert case.verdict is Verdict.UNCHANGED
    for name in (WER.name, CER.name):
        delta = next(d for d in case.metrics if d.metric == name)
        assert delta.verdict is Verdict.UNCHANGED
        assert delta.note == "identical on all 8 items"
        assert delta.paired is not None and delta.paired.differing == 0


def test_other_clips_are_not_comparable() -> None:
    other = _run("noisy", _case(SNR5["items"], SNR5["clips_sha256"], RTF_SAMPLES))
    case = compare_runs(BASELINE, other).cases[0]
    assert case.verdict is Verdict.NOT_COMPARABLE
    assert any(r.startswith("clips changed") for r in case.reasons)


def test_a_missing_clip_is_not_comparable_with_its_id() -> None:
    fewer = CLEAN["items"][:-1]
    other = _run("fewer", _case(fewer, CLEAN["clips_sha256"], RTF_SAMPLES[:-1]))
    case = compare_runs(BASELINE, other).cases[0]
    assert case.verdict is Verdict.NOT_COMPARABLE
    assert "speech_to_text.wer: items differ (8 -> 7): 1 only in the baseline (s07)" in (
        case.reasons
    )


def test_the_terminal_lines_carry_the_paired_figures() -> None:
    degraded = _run("degraded", _case(SNR5["items"], CLEAN["clips_sha256"], RTF_SAMPLES))
    text = "\n".join(comparison_lines(compare_runs(BASELINE, degraded)))
    assert "speech_to_text.wer" in text
    assert "Wilcoxon p=0.00781 over 8 items (8 differ), median difference +0.4286" in text
    assert "raise repeats" not in text  # more repeats cannot help a paired comparison
    assert "paired over items (Wilcoxon signed-rank): 2 metrics: 2 regressed" in text
    rerun = comparison_lines(compare_runs(BASELINE, BASELINE))
    assert rerun[-1] == "  paired over items (Wilcoxon signed-rank): 2 metrics: 2 unchanged"


@pytest.mark.parametrize(
    ("spec", "paired"),
    [
        (WER, True),
        (CER, True),
        (PERPLEXITY, True),
        (REFERENCE_PERPLEXITY, True),
        (AGREEMENT, True),
        (KL, True),
        (CORPUS_WER, False),  # one pooled sample
        (RTF, False),  # a timing
    ],
)
def test_which_metrics_compare_item_by_item(spec: MetricSpec, paired: bool) -> None:
    assert spec.paired is paired


def test_quality_items_pair_by_position() -> None:
    def run(run_id: str, ppl: tuple[float, ...]) -> RunRecord:
        case = CaseResult(
            "perf::m::quality",
            "perf",
            "m",
            "quality",
            Status.PASSED,
            params={"chunks": 8},
            metrics=(Metric(PERPLEXITY.name, PERPLEXITY.unit, ppl),),
            artifacts={"items": len(ppl)},
        )
        return dataclasses.replace(_run(run_id, case), models={})

    base = (13.1, 12.0, 14.2, 13.3, 11.9, 12.8, 13.5, 14.0)
    worse = tuple(v * 1.2 for v in base)
    case = compare_runs(run("a", base), run("b", worse)).cases[0]
    assert case.verdict is Verdict.REGRESSED
    assert case.metrics[0].paired is not None and case.metrics[0].paired.items == 8
