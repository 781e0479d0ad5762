"""The mlx_audio backend: speech to text with mlx-audio's Whisper, float32 on CPU, and text to
speech with mlx-audio's TTS models (the zoo's tiny random Soprano).

The zoo's tiny random Whisper and Soprano are built during the run; the real-model test needs
``whisper-tiny-en`` prepared (``mlx-harness models prepare whisper-tiny-en``) and espeak-ng,
and skips, saying so, without them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.backends import BACKENDS
from harness.backends.base import (
    BackendCapability,
    BackendError,
    SpeechChunk,
    Synthesizing,
    Transcribing,
    check_delivered,
    declared_capabilities,
)
from harness.backends.mlx_audio import BACKEND, audio_kind, model_type


@pytest.mark.parametrize(
    ("config", "match"),
    [
        (None, r"config.json: cannot read it \(FileNotFoundError\); fix: point the suite"),
        ("{not json", r"config.json: cannot read it \(JSONDecodeError\)"),
        ('["whisper"]', r"model_type None has no speech-to-text runner"),
        ('{"model_type": "llama"}', r"model_type 'llama' has no speech-to-text runner .* whisper"),
    ],
)
def test_unknown_or_unreadable_models_are_one_line(
    tmp_path: Path, config: str | None, match: str
) -> None:
    if config is not None:
        (tmp_path / "config.json").write_text(config)
    with pytest.raises(BackendError, match=match) as info:
        model_type(tmp_path)
    assert "\n" not in str(info.value) and str(tmp_path) in str(info.value)


def test_registered_with_audio_input_and_output() -> None:
    assert BACKENDS.get("mlx_audio") is BACKEND
    assert declared_capabilities(BACKEND, "mlx_audio") == {
        BackendCapability.AUDIO_IN,
        BackendCapability.AUDIO_OUT,
    }


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ('{"model_type": "llama3_fake"}', r"model_type 'llama3_fake' is neither a speech-to-text"),
        (
            '{"model_type": "parakeet"}',
            r"'parakeet' is neither .* \(mlx-audio files it under stt\)",
        ),
    ],
)
def test_audio_kind_names_models_it_cannot_run(tmp_path: Path, config: str, match: str) -> None:
    pytest.importorskip("mlx_audio", reason="mlx-audio is the optional 'audio' extra")
    (tmp_path / "config.json").write_text(config)
    with pytest.raises(BackendError, match=match) as info:
        audio_kind(tmp_path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ('{"model_type": "whisper"}', ("stt", "whisper")),
        ('{"model_type": "soprano"}', ("tts", "soprano")),
    ],
)
def test_audio_kind(tmp_path: Path, config: str, expected: tuple[str, str]) -> None:
    pytest.importorskip("mlx_audio", reason="mlx-audio is the optional 'audio' extra")
    (tmp_path / "config.json").write_text(config)
    assert audio_kind(tmp_path) == expected


@pytest.fixture(scope="module")
def zoo_whisper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mlx_audio", reason="mlx-audio is the optional 'audio' extra")
    from harness.models.zoo.build import build
    from harness.models.zoo.families import FAMILIES

    return build(FAMILIES["whisper"], tmp_path_factory.mktemp("zoo") / "whisper")


def test_loads_the_zoo_whisper_and_transcribes(zoo_whisper: Path) -> None:
    model, info = BACKEND.load(zoo_whisper)
    assert isinstance(model, Transcribing) and model.sample_rate == 16000
    check_delivered("mlx_audio", BACKEND.capabilities, model)  # raises when it lacks one
    assert info.details["dtype"] == "float32" and info.weights_bytes > 0
    assert info.details["mlx_peak_bytes"] >= info.details["mlx_active_bytes"] > 0
    text = model.transcribe(np.zeros(16000, np.float32))  # random weights: any text
    assert isinstance(text, str)


@pytest.fixture(scope="module")
def zoo_soprano(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mlx_audio", reason="mlx-audio is the optional 'audio' extra")
    from harness.models.zoo.build import build
    from harness.models.zoo.families_audio import SOPRANO

    return build(SOPRANO, tmp_path_factory.mktemp("zoo") / "soprano")


def test_loads_the_zoo_soprano_and_synthesizes(zoo_soprano: Path) -> None:
    model, info = BACKEND.load(zoo_soprano)
    assert isinstance(model, Synthesizing) and not model.streams
    check_delivered("mlx_audio", BACKEND.capabilities, model)
    assert info.details["dtype"] == "float32" and info.weights_bytes > 0
    chunks = list(model.synthesize("Rice is often served in round bowls."))
    assert chunks and all(isinstance(c, SpeechChunk) for c in chunks)
    assert {c.sample_rate for c in chunks} == {32000}
    audio = np.concatenate([c.audio for c in chunks])
    assert audio.dtype == np.float32 and audio.ndim == 1 and audio.size > 0
    assert np.isfinite(audio).all()
    again = np.concatenate(
        [c.audio for c in model.synthesize("Rice is often served in round bowls.")]
    )
    assert np.array_equal(audio, again)  # greedy: the same speech twice
    with pytest.raises(BackendError, match="makes speech; it does not transcribe"):
        model.transcribe(np.zeros(16000, np.float32))


def test_whisper_makes_no_speech(zoo_whisper: Path) -> None:
    model, _info = BACKEND.load(zoo_whisper)
    with pytest.raises(BackendError, match="transcribes speech; it makes none"):
        list(model.synthesize("hello"))


@pytest.mark.real_model
def test_whisper_tiny_en_transcribes_a_reference_clip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.models import whisper_ct2
    from harness.scenarios import speech_clips
    from harness.scenarios.speech_scoring import word_errors

    path = whisper_ct2.default_path()
    if not whisper_ct2.is_prepared(path):
        pytest.skip(f"whisper-tiny-en is not prepared in {path}; run mlx-harness models prepare")
    if speech_clips.shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (Debian: apt-get install -y espeak-ng)")
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path))
    model, _info = BACKEND.load(path)
    clip = speech_clips.clip_set("clean", 6, False)[5]  # "The juice of lemons makes fine punch."
    assert word_errors([clip.text], [model.transcribe(clip.audio)]).rate <= 0.25


@pytest.mark.parametrize(
    ("backend", "action", "code"),
    [("mlx_audio", "allow", "ok"), ("mlx_lm", "block", "backend_mismatch")],
)
def test_policy_runs_speech_to_text_only_through_mlx_audio(
    zoo_whisper: Path, backend: str, action: str, code: str
) -> None:
    from harness.probe.machine import MemoryBudget
    from harness.probe.policy import decide
    from harness.probe.probe import probe_model
    from harness.scenarios.speech_to_text import SCENARIO

    plenty = MemoryBudget(total_bytes=64 * 1024**3, available_bytes=48 * 1024**3)
    decision = decide(
        probe_model(zoo_whisper), scenario_needs=SCENARIO.needs, memory=plenty, backend=backend
    )
    assert (decision.action.value, decision.code.value) == (action, code)
