"""``text_to_speech``: real-time factor, time to first audio, output checks and round-trip
intelligibility of a text-to-speech model over known sentences.

Each repeat synthesises every sentence (:data:`harness.scenarios.speech_clips.SENTENCES`); per
sentence and repeat:

- ``synthesize_s``: wall time from the call to the last audio chunk;
- ``ttfa_s``: time to the first audio chunk (a whole segment where the model does not stream:
  the ``streams`` artifact says which);
- ``rtf``: real-time factor, synthesize_s / seconds of audio made (below 1: faster than real
  time).

Checks (failures of the case): audio was made, every sample is finite, the sample rate is the
same in every chunk, and the duration is plausible for the text (between ``min_s_per_word``
and ``max_s_per_word`` seconds per word; ``check_duration: false`` turns this off, for random
weights).

Round trip: the first repeat's audio, resampled to 16 kHz, is transcribed by the embedded
Whisper (``reference``, loaded in the same worker through the mlx_audio backend, like
``quality`` loads its reference) and scored by WER against the input text (``round_trip_wer``
per sentence; ``corpus_round_trip_wer`` pooled). Random weights give a WER near 1: the
pipeline ran, the speech is not speech.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field, model_validator

from harness.backends.base import BackendCapability, BackendError, Synthesizing, Transcribing
from harness.core.metrics import MetricSpec
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
from harness.scenarios.speech_clips import SENTENCES
from harness.scenarios.speech_scoring import word_errors

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

PREFIX = "text_to_speech."
RTF = MetricSpec(
    f"{PREFIX}rtf", Unit.RATIO, False, "real-time factor: synthesis time / audio duration"
)
TTFA = MetricSpec(
    f"{PREFIX}ttfa_s", Unit.SECONDS, False, "time to the first audio chunk of a sentence"
)
SYNTHESIZE = MetricSpec(
    f"{PREFIX}synthesize_s", Unit.SECONDS, False, "wall time to synthesise one sentence"
)
AUDIO = MetricSpec(f"{PREFIX}audio_s", Unit.SECONDS, False, "seconds of audio per sentence")
ROUND_TRIP_WER = MetricSpec(
    f"{PREFIX}round_trip_wer",
    Unit.RATIO,
    False,
    "WER of the reference Whisper's transcript of the speech, per sentence",
    noise_floor=0.0,
)
CORPUS_ROUND_TRIP_WER = MetricSpec(
    f"{PREFIX}corpus_round_trip_wer",
    Unit.RATIO,
    False,
    "word errors of all round-trip transcripts / their words",
    noise_floor=0.0,
)
WHISPER_RATE = 16000  # Hz


class TextToSpeechParams(Params):
    sentences: int = Field(4, ge=1, le=len(SENTENCES), description="sentences to synthesise")
    reference: str | None = Field(
        "whisper-tiny-en",
        description="embedded speech-to-text model for the round trip; null: no round trip",
    )
    check_duration: bool = Field(True, description="fail on an implausible duration per word")
    min_s_per_word: float = Field(0.12, gt=0, description="shortest plausible speech per word")
    max_s_per_word: float = Field(1.5, gt=0, description="longest plausible speech per word")

    @model_validator(mode="after")
    def _ordered(self) -> TextToSpeechParams:
        if self.min_s_per_word >= self.max_s_per_word:
            raise ValueError("min_s_per_word must be below max_s_per_word")
        return self


@dataclass(frozen=True)
class Speech:
    """One sentence's synthesis: the samples joined, their rate, and its timings."""

    audio: NDArray[np.float32]
    sample_rate: int
    chunks: int
    rates: frozenset[int]
    ttfa_s: float
    seconds: float

    @property
    def audio_s(self) -> float:
        return len(self.audio) / self.sample_rate if self.sample_rate > 0 else 0.0


def timed_synthesis(model: Synthesizing, text: str) -> Speech:
    import numpy as np

    start = time.perf_counter()
    first: float | None = None
    parts: list[NDArray[np.float32]] = []
    rates: set[int] = set()
    for chunk in model.synthesize(text):
        if first is None:
            first = time.perf_counter() - start
        parts.append(chunk.audio)
        rates.add(int(chunk.sample_rate))
    seconds = time.perf_counter() - start
    audio = np.concatenate(parts) if parts else np.zeros(0, np.float32)
    rate = min(rates) if rates else 0
    return Speech(audio, rate, len(parts), frozenset(rates), first or seconds, seconds)


def speech_checks(text: str, speech: Speech, params: TextToSpeechParams) -> list[str]:
    """What is wrong with ``speech`` made for ``text`` (empty: nothing)."""
    import numpy as np

    label = f"sentence {text!r}"
    if speech.chunks == 0 or len(speech.audio) == 0:
        return [f"{label}: no audio"]
    problems: list[str] = []
    if len(speech.rates) > 1:
        problems.append(f"{label}: chunks at different sample rates {sorted(speech.rates)}")
    if speech.sample_rate <= 0:
        problems.append(f"{label}: sample rate {speech.sample_rate} Hz")
        return problems
    bad = int(np.count_nonzero(~np.isfinite(speech.audio)))
    if bad:
        problems.append(f"{label}: {bad} of {len(speech.audio)} samples are not finite")
    words = max(1, len(text.split()))
    per_word = speech.audio_s / words
    if params.check_duration and not params.min_s_per_word <= per_word <= params.max_s_per_word:
        problems.append(
            f"{label}: {speech.audio_s:.2f} s of audio for {words} words ({per_word:.2f} s per "
            f"word; plausible: {params.min_s_per_word}-{params.max_s_per_word})"
        )
    return problems


def to_whisper_rate(speech: Speech) -> NDArray[np.float32]:
    """The speech as 16 kHz mono float32 in [-1, 1] (mlx-audio's polyphase resampler)."""
    import numpy as np

    audio = np.nan_to_num(speech.audio, nan=0.0, posinf=0.0, neginf=0.0)
    audio = np.clip(audio, -1.0, 1.0).astype(np.float32)
    if speech.sample_rate == WHISPER_RATE:
        return audio
    from mlx_audio.resample import resample_audio_array

    return np.asarray(resample_audio_array(audio, speech.sample_rate, WHISPER_RATE), np.float32)


def load_reference(name: str) -> tuple[Transcribing | None, str | None]:
    """The embedded speech-to-text model ``name`` loaded in this worker, or why not."""
    from harness.backends import BACKENDS
    from harness.models.catalog import find_embedded

    found = find_embedded(name)
    if found is None:
        return None, f"reference {name!r} is no embedded model; see `mlx-harness models list`"
    if not found.prepared:
        return None, f"reference {name} is not prepared; run `mlx-harness models prepare {name}`"
    try:
        model, _info = BACKENDS.get("mlx_audio").load(found.path)
    except BackendError as exc:
        return None, f"reference {name} could not be loaded: {exc}"
    if not isinstance(model, Transcribing):
        return None, f"reference {name} does not transcribe speech"
    return model, None


def item_row(index: int, text: str, speech: Speech, transcript: str | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": f"s{index:02d}",
        "text": text,
        "audio_s": round(speech.audio_s, 4),
        "sample_rate": speech.sample_rate,
        "chunks": speech.chunks,
    }
    if transcript is not None:
        errors = word_errors([text], [transcript])
        row.update(transcript=transcript, wer=errors.rate)
    return row


class TextToSpeechScenario(BaseScenario[TextToSpeechParams]):
    name: ClassVar[str] = "text_to_speech"
    version: ClassVar[int] = 1
    params_model = TextToSpeechParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        RTF,
        TTFA,
        SYNTHESIZE,
        AUDIO,
        ROUND_TRIP_WER,
        CORPUS_ROUND_TRIP_WER,
    )
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.TTS})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.AUDIO_OUT})

    def run(self, ctx: ScenarioContext, params: TextToSpeechParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Synthesizing):
            return lacks(ctx, BackendCapability.AUDIO_OUT)
        texts = list(SENTENCES[: params.sentences])
        shortest = min(texts, key=len)
        warm = [timed_synthesis(model, shortest) for _ in range(ctx.warmup)]
        runs = [[timed_synthesis(model, t) for t in texts] for _ in range(max(1, ctx.repeats))]
        first = runs[0]
        failures = [
            p for t, s in zip(texts, first, strict=True) for p in speech_checks(t, s, params)
        ]
        transcripts: list[str] | None = None
        artifacts: dict[str, Any] = {"streams": bool(model.streams)}
        if params.reference is not None and not failures:
            artifacts["reference"] = params.reference
            reference, refused = load_reference(params.reference)
            if reference is None:
                failures.append(str(refused))
            else:
                transcripts = [reference.transcribe(to_whisper_rate(s)) for s in first]
        made = [s for run in runs for s in run]
        metrics = [
            metric(RTF, _rtfs(made), _rtfs(warm)),
            metric(TTFA, [s.ttfa_s for s in made], [s.ttfa_s for s in warm]),
            metric(SYNTHESIZE, [s.seconds for s in made], [s.seconds for s in warm]),
            metric(AUDIO, [s.audio_s for s in first]),
        ]
        items = [
            item_row(i, t, s, transcripts[i] if transcripts is not None else None)
            for i, (t, s) in enumerate(zip(texts, first, strict=True))
        ]
        if transcripts is not None:
            metrics.append(metric(ROUND_TRIP_WER, [float(i["wer"]) for i in items]))
            metrics.append(metric(CORPUS_ROUND_TRIP_WER, [word_errors(texts, transcripts).rate]))
        artifacts["sample_rate"] = first[0].sample_rate
        artifacts["items"] = items
        return ScenarioOutput(tuple(metrics), artifacts, tuple(failures))


def _rtfs(speeches: list[Speech]) -> list[float]:
    """Real-time factors of the syntheses that made audio (the others fail a check)."""
    return [s.seconds / s.audio_s for s in speeches if s.audio_s > 0]


@dataclass(frozen=True)
class TextToSpeechArtifacts(ScenarioArtifacts):
    """What a ``text_to_speech`` case records beside its metrics that the report reads."""

    streams: bool | None = None  # audio arrives while the model generates
    reference: str | None = None  # the transcriber of the round trip
    sample_rate: float | None = None  # Hz
    items: tuple[dict[str, Any], ...] = ()  # one per sentence (:func:`item_row`)


SCENARIO = TextToSpeechScenario()
