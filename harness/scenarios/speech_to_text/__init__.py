"""``speech_to_text``: transcription time, real-time factor, WER and CER over a clip set.

The clips (:mod:`harness.scenarios.speech_clips`) are espeak-ng speech of known sentences,
clean or with noise at a set SNR, plus one passage longer than 30 s (Whisper's long-form
windowing). Each repeat transcribes every clip greedily; per clip:

- ``transcribe_s``: wall time of the call, audio already in memory (features included);
- ``rtf``: real-time factor, transcribe_s / audio seconds (below 1: faster than real time);
- ``wer`` / ``cer``: word / character error rate against the text (jiwer, standard
  normalisation); greedy decoding repeats identically, so these come from the first repeat
  and a later repeat whose transcript differs fails the case.

Samples are per clip (timings: per clip and repeat), in clip order; the ``items`` artifact
holds each clip's id, text, transcript and scores so a comparison can pair clips across runs.
``corpus_wer`` / ``corpus_cer`` pool the errors of all clips (one sample).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field, field_validator

from harness.backends.base import BackendCapability, Transcribing
from harness.core.metrics import MetricSpec, VariesBy
from harness.core.types import Unit
from harness.probe.types import Capability
from harness.scenarios.artifacts import ScenarioArtifacts
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    lacks,
    metric,
)
from harness.scenarios.speech_clips import (
    SENTENCES,
    Clip,
    ClipError,
    clip_set,
    clip_set_sha256,
    snr_of,
)
from harness.scenarios.speech_scoring import char_errors, word_errors

PREFIX = "speech_to_text."
TRANSCRIBE = MetricSpec(
    f"{PREFIX}transcribe_s", Unit.SECONDS, False, "wall time to transcribe one clip"
)
RTF = MetricSpec(
    f"{PREFIX}rtf", Unit.RATIO, False, "real-time factor: transcribe time / audio duration"
)
WER = MetricSpec(
    f"{PREFIX}wer",
    Unit.RATIO,
    False,
    "word error rate per clip",
    noise_floor=0.0,
    varies_by=VariesBy.ITEM,
)
CER = MetricSpec(
    f"{PREFIX}cer",
    Unit.RATIO,
    False,
    "character error rate per clip",
    noise_floor=0.0,
    varies_by=VariesBy.ITEM,
)
CORPUS_WER = MetricSpec(
    f"{PREFIX}corpus_wer",
    Unit.RATIO,
    False,
    "word errors of all clips / their words",
    noise_floor=0.0,
)
CORPUS_CER = MetricSpec(
    f"{PREFIX}corpus_cer",
    Unit.RATIO,
    False,
    "character errors of all clips / their characters",
    noise_floor=0.0,
)
AUDIO = MetricSpec(f"{PREFIX}audio_s", Unit.SECONDS, False, "seconds of speech in the clip set")


class SpeechToTextParams(Params):
    clip_set: str = Field("clean", description="'clean', or 'snr<dB>' for white noise at that SNR")
    sentences: int = Field(8, ge=1, le=len(SENTENCES), description="short clips, one sentence each")
    long_clip: bool = Field(True, description="add one passage longer than 30 s (long-form)")

    @field_validator("clip_set")
    @classmethod
    def _known_set(cls, value: str) -> str:
        snr_of(value)  # ValueError names the forms it takes
        return value


@dataclass(frozen=True)
class Transcript:
    text: str
    seconds: float


def timed_transcribe(model: Transcribing, clip: Clip) -> Transcript:
    start = time.perf_counter()
    text = model.transcribe(clip.audio)
    return Transcript(text, time.perf_counter() - start)


def item_row(clip: Clip, transcript: Transcript) -> dict[str, Any]:
    words = word_errors([clip.text], [transcript.text])
    chars = char_errors([clip.text], [transcript.text])
    return {
        "id": clip.clip_id,
        "long_form": clip.long_form,
        "audio_s": round(clip.audio_s, 4),
        "reference": clip.text,
        "hypothesis": transcript.text,
        "wer": words.rate,
        "cer": chars.rate,
        "word_errors": words.substitutions + words.deletions + words.insertions,
        "words": words.reference,
    }


class SpeechToTextScenario(BaseScenario[SpeechToTextParams]):
    name: ClassVar[str] = "speech_to_text"
    version: ClassVar[int] = 1
    params_model = SpeechToTextParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        RTF,
        TRANSCRIBE,
        WER,
        CER,
        CORPUS_WER,
        CORPUS_CER,
        AUDIO,
    )
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.AUDIO_IN})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.AUDIO_IN})

    def run(self, ctx: ScenarioContext, params: SpeechToTextParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Transcribing):
            return lacks(ctx, BackendCapability.AUDIO_IN)
        try:
            clips = clip_set(params.clip_set, params.sentences, params.long_clip)
        except ClipError as exc:
            return ScenarioOutput((), skip_reason=str(exc))
        shortest = min(clips, key=lambda c: c.audio_s)
        warm = [timed_transcribe(model, shortest).seconds for _ in range(ctx.warmup)]
        runs = [[timed_transcribe(model, c) for c in clips] for _ in range(max(1, ctx.repeats))]
        first = runs[0]
        failures = tuple(
            f"clip {clip.clip_id}: greedy transcript of repeat {i + 1} differs from repeat 1: "
            f"{transcript.text!r} vs {first[j].text!r}"
            for i, run in enumerate(runs[1:], start=1)
            for j, (clip, transcript) in enumerate(zip(clips, run, strict=True))
            if transcript.text != first[j].text
        )
        items = [item_row(c, t) for c, t in zip(clips, first, strict=True)]
        references = [c.text for c in clips]
        hypotheses = [t.text for t in first]
        seconds = [t.seconds for run in runs for t in run]
        rtf = [t.seconds / c.audio_s for run in runs for c, t in zip(clips, run, strict=True)]
        metrics = (
            metric(RTF, rtf, [s / shortest.audio_s for s in warm]),
            metric(TRANSCRIBE, seconds, warm),
            metric(WER, [float(i["wer"]) for i in items]),
            metric(CER, [float(i["cer"]) for i in items]),
            metric(CORPUS_WER, [word_errors(references, hypotheses).rate]),
            metric(CORPUS_CER, [char_errors(references, hypotheses).rate]),
            metric(AUDIO, [sum(c.audio_s for c in clips)]),
        )
        artifacts = {
            "clip_set": params.clip_set,
            "clips_sha256": clip_set_sha256(clips),
            "items": items,
        }
        return ScenarioOutput(metrics, artifacts, failures)


@dataclass(frozen=True)
class ClipScore:
    """One clip's transcript against its reference (:func:`item_row` writes it)."""

    id: str | None = None
    long_form: bool = False  # the clip over 30 s
    reference: str = ""
    hypothesis: str = ""  # the model's transcript (untrusted)
    wer: float | None = None


@dataclass(frozen=True)
class SpeechToTextArtifacts(ScenarioArtifacts):
    """What a ``speech_to_text`` case records beside its metrics."""

    clip_set: str | None = None
    clips_sha256: str | None = None
    items: tuple[ClipScore, ...] = ()

    def long_form_wer(self) -> float | None:
        return next((i.wer for i in self.items if i.long_form), None)


SCENARIO = SpeechToTextScenario()
