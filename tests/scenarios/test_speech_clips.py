"""The reference clips: set names, noise at a set SNR (seeded), espeak-ng speech cached."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.scenarios import speech_clips
from harness.scenarios.speech_clips import ClipError, add_noise, clip_set, clip_set_sha256, snr_of


@pytest.mark.parametrize(
    ("name", "snr"), [("clean", None), ("snr10", 10.0), ("snr0", 0.0), ("snr-5", -5.0)]
)
def test_set_names(name: str, snr: float | None) -> None:
    assert snr_of(name) == snr


@pytest.mark.parametrize("name", ["", "noisy", "snr", "snr10db", "SNR10", "snr100"])
def test_bad_set_names_say_the_forms(name: str) -> None:
    with pytest.raises(ValueError, match="use 'clean' or 'snr<dB>'"):
        snr_of(name)


@pytest.mark.parametrize("snr_db", [20.0, 10.0, 0.0])
def test_noise_is_at_the_snr_and_seeded(snr_db: float) -> None:
    t = np.arange(32000) / 16000
    audio = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    noisy = add_noise(audio, snr_db, seed=7)
    noise = noisy.astype(np.float64) - audio
    measured = 10 * np.log10(np.mean(audio.astype(np.float64) ** 2) / np.mean(noise**2))
    assert measured == pytest.approx(snr_db, abs=0.2)
    assert np.array_equal(noisy, add_noise(audio, snr_db, seed=7))
    assert not np.array_equal(noisy, add_noise(audio, snr_db, seed=8))


def test_missing_espeak_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(speech_clips.shutil, "which", lambda name: None)
    with pytest.raises(ClipError, match="espeak-ng is not installed; fix: apt-get") as info:
        clip_set("clean", 2, False)
    assert "\n" not in str(info.value)


@pytest.fixture()
def espeak_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if speech_clips.shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (Debian: apt-get install -y espeak-ng)")
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path))
    return tmp_path


@pytest.mark.slow
def test_espeak_clips_are_cached_deterministic_and_long(espeak_cache: Path) -> None:
    clean = clip_set("clean", 2, True)
    assert [c.clip_id for c in clean] == ["s00", "s01", "long"]
    assert [c.long_form for c in clean] == [False, False, True]
    assert 1.0 < clean[0].audio_s < 8.0 and clean[-1].audio_s > 30.0
    assert all(c.audio.dtype == np.float32 and np.abs(c.audio).max() <= 1.0 for c in clean)
    wavs = sorted(p.name for p in espeak_cache.rglob("*.wav"))
    assert wavs == ["long.wav", "s00.wav", "s01.wav"]
    again = clip_set("clean", 2, True)  # read back from the cache
    assert clip_set_sha256(again) == clip_set_sha256(clean)
    noisy = clip_set("snr10", 2, True)
    assert clip_set_sha256(noisy) == clip_set_sha256(clip_set("snr10", 2, True))
    assert clip_set_sha256(noisy) != clip_set_sha256(clean)
    assert [c.text for c in noisy] == [c.text for c in clean]
