"""text_to_speech on scripted synthesizers and a scripted reference transcriber (no model); the
round trip's positive control runs espeak-ng speech through the real Whisper tiny.en."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from harness.backends.base import (
    BackendCapability,
    LoadInfo,
    SpeechChunk,
    Synthesizing,
    Transcribing,
)
from harness.probe.types import Capability
from harness.scenarios import text_to_speech as tts
from harness.scenarios.base import ScenarioContext
from harness.scenarios.speech_clips import SENTENCES
from harness.scenarios.speech_scoring import word_errors

RATE = 16000


def speech(seconds: float, rate: int = RATE, value: float = 0.1) -> np.ndarray:
    return np.full(int(seconds * rate), value, np.float32)


class Scripted:
    """Makes ``chunks`` chunks per sentence whose audio the script gives (text -> samples)."""

    def __init__(
        self,
        script: Callable[[str], np.ndarray],
        *,
        chunks: int = 1,
        rate: int = RATE,
        streams: bool = False,
    ) -> None:
        self.script = script
        self.chunks = chunks
        self.rate = rate
        self.streams = streams
        self.calls: list[str] = []

    def synthesize(self, text: str) -> Iterator[SpeechChunk]:
        self.calls.append(text)
        for part in np.array_split(self.script(text), self.chunks):
            yield SpeechChunk(part.astype(np.float32), self.rate)


class Listener:
    """A reference transcriber that hears the text it was told (by audio length)."""

    sample_rate = RATE

    def __init__(self, heard: dict[int, str]) -> None:
        self.heard = heard
        self.sizes: list[int] = []

    def transcribe(self, audio: np.ndarray) -> str:
        self.sizes.append(audio.size)
        return self.heard.get(audio.size, "")


def _ctx(model: object, repeats: int = 2, warmup: int = 1) -> ScenarioContext:
    info = LoadInfo(0.1, 0, "cpu")
    return ScenarioContext(model, info, repeats, warmup, lambda: (model, info), "mlx_audio")


def _metrics(output: tts.ScenarioOutput) -> dict[str, tuple[float, ...]]:
    return {m.name.removeprefix(tts.PREFIX): m.samples for m in output.metrics}


def _words(text: str) -> int:
    return len(text.split())


def _reference(monkeypatch: pytest.MonkeyPatch, listener: Listener | None, why: str = "") -> None:
    monkeypatch.setattr(tts, "load_reference", lambda name: (listener, why or None))


def test_needs_speech_output_from_model_and_backend() -> None:
    assert tts.SCENARIO.needs == {Capability.TTS}
    assert tts.SCENARIO.backend_needs == {BackendCapability.AUDIO_OUT}
    assert isinstance(Scripted(lambda t: speech(1)), Synthesizing)
    assert isinstance(Listener({}), Transcribing)


def test_times_every_sentence_and_scores_the_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = SENTENCES[:3]
    # 50 ms per character (distinct lengths); the listener hears sentence 0 right, 1 with one
    # word wrong, 2 not at all.
    model = Scripted(lambda t: speech(0.05 * len(t)), chunks=3, streams=True)
    size = {t: int(0.05 * len(t) * RATE) for t in texts}
    assert len(set(size.values())) == 3
    first = texts[1].split()
    heard = {size[texts[0]]: texts[0].upper(), size[texts[1]]: " ".join(["x", *first[1:]])}
    listener = Listener(heard)
    _reference(monkeypatch, listener)
    output = tts.SCENARIO.run(_ctx(model), tts.TextToSpeechParams(sentences=3))
    assert output.failures == () and output.skip_reason is None
    samples = _metrics(output)
    assert len(samples["rtf"]) == len(samples["ttfa_s"]) == len(samples["synthesize_s"]) == 6
    assert all(t <= s for t, s in zip(samples["ttfa_s"], samples["synthesize_s"], strict=True))
    assert samples["audio_s"] == pytest.approx([0.05 * len(t) for t in texts], abs=1e-3)
    assert samples["round_trip_wer"] == pytest.approx((0.0, 1 / len(first), 1.0))
    counted = [word_errors([t], [t]).reference for t in texts]  # words after normalisation
    assert samples["corpus_round_trip_wer"] == pytest.approx(((1 + counted[2]) / sum(counted),))
    shortest = min(texts, key=len)
    assert model.calls == [shortest, *texts, *texts]  # one warm-up, then 2 repeats
    assert listener.sizes == [size[t] for t in texts]  # the first repeat, once each
    assert output.artifacts["streams"] is True and output.artifacts["sample_rate"] == RATE
    items = output.artifacts["items"]
    assert [i["chunks"] for i in items] == [3, 3, 3]
    assert items[0]["transcript"] == texts[0].upper() and items[2]["wer"] == 1.0


def test_speech_at_another_rate_is_resampled_for_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("mlx_audio", reason="the resampler is mlx-audio's")
    model = Scripted(lambda t: speech(2.0, 24000), rate=24000)
    listener = Listener({})
    _reference(monkeypatch, listener)
    output = tts.SCENARIO.run(_ctx(model, 1, 0), tts.TextToSpeechParams(sentences=1))
    assert output.failures == ()
    assert listener.sizes == [2 * RATE]
    assert _metrics(output)["audio_s"] == (2.0,)


@pytest.mark.parametrize(
    ("script", "rate", "params", "found"),
    [
        (lambda t: speech(0), RATE, {}, "no audio"),
        (
            lambda t: np.array([0.1, np.nan, np.inf] * 12000, np.float32),
            RATE,
            {},
            "24000 of 36000 samples are not finite",
        ),
        (lambda t: speech(30.0), RATE, {}, "s per word; plausible: 0.12-1.5"),
        (lambda t: speech(0.1), RATE, {}, "s per word; plausible"),
        (lambda t: speech(3.0), 0, {}, "sample rate 0 Hz"),
    ],
)
def test_checks_fail_the_case_and_skip_the_round_trip(
    monkeypatch: pytest.MonkeyPatch,
    script: Callable[[str], np.ndarray],
    rate: int,
    params: dict[str, object],
    found: str,
) -> None:
    listener = Listener({})
    _reference(monkeypatch, listener)
    model = Scripted(script, rate=rate)
    output = tts.SCENARIO.run(_ctx(model, 1, 0), tts.TextToSpeechParams(sentences=1, **params))
    assert len(output.failures) == 1 and found in output.failures[0]
    assert output.failures[0].startswith(f"sentence {SENTENCES[0]!r}: ")
    assert listener.sizes == []  # no round trip of broken audio
    assert "round_trip_wer" not in _metrics(output)


def test_duration_check_can_be_turned_off_for_random_weights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _reference(monkeypatch, Listener({}))
    model = Scripted(lambda t: speech(30.0))
    params = tts.TextToSpeechParams(sentences=1, check_duration=False)
    output = tts.SCENARIO.run(_ctx(model, 1, 0), params)
    assert output.failures == ()
    assert _metrics(output)["round_trip_wer"] == (1.0,)


def test_chunks_at_different_rates_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    _reference(monkeypatch, Listener({}))

    class Mixed(Scripted):
        def synthesize(self, text: str) -> Iterator[SpeechChunk]:
            yield SpeechChunk(speech(1.0), RATE)
            yield SpeechChunk(speech(1.0, 24000), 24000)

    output = tts.SCENARIO.run(
        _ctx(Mixed(lambda t: speech(1)), 1, 0), tts.TextToSpeechParams(sentences=1)
    )
    assert any("different sample rates [16000, 24000]" in f for f in output.failures)


def test_missing_reference_fails_with_its_reason_and_null_skips_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = Scripted(lambda t: speech(0.4 * _words(t)))
    why = "reference whisper-tiny-en is not prepared; run `mlx-harness models prepare ...`"
    _reference(monkeypatch, None, why)
    output = tts.SCENARIO.run(_ctx(model, 1, 0), tts.TextToSpeechParams(sentences=1))
    assert output.failures == (why,)
    output = tts.SCENARIO.run(
        _ctx(model, 1, 0), tts.TextToSpeechParams(sentences=1, reference=None)
    )
    assert output.failures == () and "round_trip_wer" not in _metrics(output)
    assert "reference" not in output.artifacts


def test_unknown_reference_is_one_line() -> None:
    model, why = tts.load_reference("no-such-model")
    assert model is None and why is not None and "is no embedded model" in why


def test_no_synthesizer_is_a_skip() -> None:
    output = tts.SCENARIO.run(_ctx(object()), tts.TextToSpeechParams())
    assert output.skip_reason == "capability_missing: backend mlx_audio has no audio output"


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"sentences": 0}, "greater than or equal to 1"),
        ({"sentences": 99}, "less than or equal to"),
        ({"min_s_per_word": 2.0, "max_s_per_word": 1.0}, "min_s_per_word must be below"),
        ({"voice": "af"}, "Extra inputs are not permitted"),
    ],
)
def test_bad_params(params: dict[str, object], match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        tts.TextToSpeechParams.model_validate(params)


@pytest.mark.real_model
@pytest.mark.nightly  # real Whisper on espeak-ng speech: 20-50 s of CPU here
def test_round_trip_of_real_speech_scores_near_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Positive control: espeak-ng speech, served at 22.05 kHz as a TTS model would, comes back
    through the embedded Whisper tiny.en well below the ~1 of random speech (tiny.en itself
    mishears espeak-ng: ~0.3 on these three sentences, so the bound is loose)."""
    pytest.importorskip("mlx_audio", reason="mlx-audio is the optional 'audio' extra")
    from mlx_audio.resample import resample_audio_array

    from harness.models import whisper_ct2
    from harness.scenarios import speech_clips

    whisper = whisper_ct2.default_path()  # before the cache moves for the clips
    if not whisper_ct2.is_prepared(whisper):
        pytest.skip("whisper-tiny-en is not prepared; run mlx-harness models prepare")
    if speech_clips.shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (Debian: apt-get install -y espeak-ng)")
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path))
    clips = {c.text: c.audio for c in speech_clips.clip_set("clean", 3, False)}
    model = Scripted(lambda t: resample_audio_array(clips[t], RATE, 22050), rate=22050)
    monkeypatch.setattr(tts, "load_reference", lambda name: _real_reference(whisper))
    output = tts.SCENARIO.run(_ctx(model, 1, 0), tts.TextToSpeechParams(sentences=3))
    assert output.failures == ()
    assert _metrics(output)["corpus_round_trip_wer"][0] <= 0.6


def _real_reference(path: Path) -> tuple[Transcribing | None, str | None]:
    from harness.backends.mlx_audio import BACKEND

    model, _info = BACKEND.load(path)
    return model, None
