"""speech_to_text on a scripted transcriber and synthetic clips (no espeak-ng, no model)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from pydantic import ValidationError

from harness.backends.base import BackendCapability, LoadInfo, Transcribing
from harness.probe.types import Capability
from harness.scenarios import speech_to_text as stt
from harness.scenarios.base import ScenarioContext
from harness.scenarios.speech_clips import Clip, ClipError

TEXTS = {"s00": "The birch canoe slid.", "s01": "Rice is often served.", "long": "a b c d"}


def _clips(name: str, sentences: int, long_clip: bool) -> list[Clip]:
    ids = [f"s{i:02d}" for i in range(sentences)] + (["long"] if long_clip else [])
    return [
        Clip(i, TEXTS[i], np.zeros(16000 * (n + 1), np.float32), long_form=i == "long")
        for n, i in enumerate(ids)
    ]


class Scripted:
    """Transcribes each clip (known by its length) as the script says; counts calls."""

    sample_rate = 16000

    def __init__(self, script: Callable[[int, int], str]) -> None:
        self.script = script
        self.calls = 0

    def transcribe(self, audio: np.ndarray) -> str:
        self.calls += 1
        return self.script(audio.size // 16000 - 1, self.calls)


def _ctx(model: object, repeats: int = 2, warmup: int = 1) -> ScenarioContext:
    info = LoadInfo(0.1, 0, "cpu")
    return ScenarioContext(model, info, repeats, warmup, lambda: (model, info), "mlx_audio")


@pytest.fixture(autouse=True)
def synthetic_clips(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stt, "clip_set", _clips)


def _metrics(output: stt.ScenarioOutput) -> dict[str, tuple[float, ...]]:
    return {m.name.removeprefix(stt.PREFIX): m.samples for m in output.metrics}


def test_needs_audio_from_model_and_backend() -> None:
    assert stt.SCENARIO.needs == {Capability.AUDIO_IN}
    assert stt.SCENARIO.backend_needs == {BackendCapability.AUDIO_IN}
    assert isinstance(Scripted(lambda i, n: ""), Transcribing)


def test_perfect_transcripts_score_zero_and_time_every_clip() -> None:
    order = list(TEXTS)
    model = Scripted(lambda index, call: TEXTS[order[index]].upper())
    params = stt.SpeechToTextParams(sentences=2)
    output = stt.SCENARIO.run(_ctx(model), params)
    assert output.failures == () and output.skip_reason is None
    samples = _metrics(output)
    assert samples["wer"] == samples["cer"] == (0.0, 0.0, 0.0)
    assert samples["corpus_wer"] == (0.0,)
    assert len(samples["rtf"]) == len(samples["transcribe_s"]) == 6  # 3 clips x 2 repeats
    assert samples["audio_s"] == (6.0,)  # 1 + 2 + 3 s
    assert model.calls == 1 + 6  # one warm-up on the shortest clip
    warm = {m.name: m.warmup_samples for m in output.metrics}
    assert len(warm[stt.RTF.name]) == 1
    items = output.artifacts["items"]
    assert [i["id"] for i in items] == ["s00", "s01", "long"]
    assert items[2]["long_form"] is True and items[0]["hypothesis"] == "THE BIRCH CANOE SLID."
    assert len(output.artifacts["clips_sha256"]) == 64


def test_errors_per_clip_and_pooled() -> None:
    model = Scripted(
        lambda index, call: ["The birch canoe.", "Rice is often served.", "a x c"][index]
    )
    output = stt.SCENARIO.run(_ctx(model, repeats=1, warmup=0), stt.SpeechToTextParams(sentences=2))
    samples = _metrics(output)
    assert samples["wer"] == pytest.approx((0.25, 0.0, 0.5))
    assert samples["corpus_wer"] == pytest.approx((3 / 12,))
    assert 0 < samples["cer"][0] < 1 and samples["cer"][1] == 0.0


def test_a_repeat_that_transcribes_differently_fails() -> None:
    model = Scripted(lambda index, call: "drift" if call == 5 else "same")
    output = stt.SCENARIO.run(_ctx(model, repeats=2, warmup=0), stt.SpeechToTextParams(sentences=2))
    assert len(output.failures) == 1
    assert output.failures[0].startswith("clip s01: greedy transcript of repeat 2 differs")


def test_no_transcriber_or_no_clips_is_a_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    output = stt.SCENARIO.run(_ctx(object()), stt.SpeechToTextParams())
    assert output.skip_reason == "capability_missing: backend mlx_audio has no audio input"

    def no_espeak(name: str, sentences: int, long_clip: bool) -> list[Clip]:
        raise ClipError("espeak-ng is not installed; fix: apt-get install -y espeak-ng")

    monkeypatch.setattr(stt, "clip_set", no_espeak)
    output = stt.SCENARIO.run(_ctx(Scripted(lambda i, n: "")), stt.SpeechToTextParams())
    assert output.skip_reason is not None and output.skip_reason.startswith("espeak-ng is not")


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"clip_set": "loud"}, "use 'clean' or 'snr<dB>'"),
        ({"sentences": 0}, "greater than or equal to 1"),
        ({"sentences": 99}, "less than or equal to"),
        ({"snr": 10}, "Extra inputs are not permitted"),
    ],
)
def test_bad_params(params: dict[str, object], match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        stt.SpeechToTextParams.model_validate(params)
