"""The reference speech clips: espeak-ng speech of sentences with known text, made at run time.

Each sentence (Harvard sentences, IEEE 1969: public domain, no numerals, so no number
normalisation is needed) is spoken once by ``espeak-ng`` into the cache
(``cache_root()/audio/espeak-<version hash>/``; never committed) and read back as 16 kHz mono
float32. A clip set is the clean speech, or the same speech with white Gaussian noise added at
a set signal-to-noise ratio (seeded per clip: the same set every run), plus one passage longer
than 30 s so Whisper's long-form windowing runs. :func:`clip_set_sha256` fingerprints the
audio a case heard: a baseline made with other audio is not comparable.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where audio is made: a report of the scenario needs none
    import numpy as np
    from numpy.typing import NDArray

from harness.models.cache_dir import cache_root

SENTENCES: tuple[str, ...] = (
    "The birch canoe slid on the smooth planks.",
    "Glue the sheet to the dark blue background.",
    "It's easy to tell the depth of a well.",
    "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.",
    "The juice of lemons makes fine punch.",
    "The box was thrown beside the parked truck.",
    "The hogs were fed chopped corn and garbage.",
    "A large size in stockings is hard to sell.",
    "The boy was there when the sun rose.",
    "A rod is used to catch pink salmon.",
    "Kick the ball straight and follow through.",
)
PASSAGE: tuple[str, ...] = (  # spoken as one clip, longer than 30 s
    "The source of the huge river is the clear spring.",
    "Help the woman get back to her feet.",
    "A pot of tea helps to pass the evening.",
    "Smoky fires lack flame and heat.",
    "The soft cushion broke the man's fall.",
    "The salt breeze came across from the sea.",
    "The small pup gnawed a hole in the sock.",
    "The fish twisted and turned on the bent hook.",
    "Press the pants and sew a button on the vest.",
    "The swan dive was far short of perfect.",
    "The beauty of the view stunned the young boy.",
    "Her purse was full of useless trash.",
    "The colt reared and threw the tall rider.",
    "It snowed, rained, and hailed the same morning.",
)
LONG_MIN_S = 30.0  # the long clip must exceed Whisper's 30 s window
VOICE = "en-us"
WORDS_PER_MINUTE = 150
SAMPLE_RATE = 16000  # Hz
_SET_NAME = re.compile(r"^(clean|snr(-?\d{1,2}))$")


class ClipError(Exception):
    """The clips cannot be made (espeak-ng missing or failing); the message is one line."""


@dataclass(frozen=True)
class Clip:
    """One reference clip: its id (stable across runs, for pairing), text and audio."""

    clip_id: str
    text: str
    audio: NDArray[np.float32]  # mono, SAMPLE_RATE Hz, [-1, 1]
    long_form: bool = False

    @property
    def audio_s(self) -> float:
        return self.audio.size / SAMPLE_RATE


def snr_of(clip_set: str) -> float | None:
    """The SNR (dB) a set name asks for: ``clean`` -> None, ``snr10`` -> 10.0."""
    match = _SET_NAME.match(clip_set)
    if match is None:
        raise ValueError(f"clip set {clip_set!r}: use 'clean' or 'snr<dB>' (e.g. snr10)")
    return None if match.group(2) is None else float(match.group(2))


def add_noise(audio: NDArray[np.float32], snr_db: float, seed: int) -> NDArray[np.float32]:
    """``audio`` plus white Gaussian noise whose power is ``snr_db`` below the audio's."""
    import numpy as np

    signal = np.asarray(audio, dtype=np.float64)
    power = float(np.mean(signal**2)) if signal.size else 0.0
    noise = np.random.default_rng(seed).standard_normal(signal.size)
    noisy = signal + noise * np.sqrt(power / 10 ** (snr_db / 10))
    return np.clip(noisy, -1.0, 1.0).astype(np.float32)


def espeak_version(espeak: str) -> str:
    out = subprocess.run([espeak, "--version"], capture_output=True, text=True, timeout=30)
    return " ".join(out.stdout.split()) or "unknown"


def find_espeak() -> str:
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise ClipError(
            "espeak-ng is not installed; fix: apt-get install -y espeak-ng (make does it as root)"
        )
    return espeak


def clips_dir(espeak: str) -> Path:
    """Where this espeak-ng version's speech is kept in the cache."""
    key = f"{espeak_version(espeak)}|{VOICE}|{WORDS_PER_MINUTE}"
    return cache_root() / "audio" / f"espeak-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def speak(espeak: str, text: str, dest: Path) -> NDArray[np.float32]:
    """``text`` spoken into ``dest`` (a WAV, written once) and read as 16 kHz float32."""
    from harness.models.ct2.asr import read_wav

    if not dest.is_file():
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
            wav = Path(tmp) / dest.name
            command = [espeak, "-v", VOICE, "-s", str(WORDS_PER_MINUTE), "-w", str(wav), text]
            done = subprocess.run(command, capture_output=True, text=True, timeout=120)
            if done.returncode != 0 or not wav.is_file():
                why = " ".join(done.stderr.split())[:200] or f"exit status {done.returncode}"
                raise ClipError(f"espeak-ng failed for {dest.name}: {why}")
            wav.replace(dest)
    return read_wav(dest, SAMPLE_RATE)


def clean_clips(sentences: int, long_clip: bool) -> list[Clip]:
    """The first ``sentences`` sentences (and the long passage), clean."""
    espeak = find_espeak()
    folder = clips_dir(espeak)
    clips = [
        Clip(f"s{i:02d}", text, speak(espeak, text, folder / f"s{i:02d}.wav"))
        for i, text in enumerate(SENTENCES[:sentences])
    ]
    if long_clip:
        text = " ".join(PASSAGE)
        long = Clip("long", text, speak(espeak, text, folder / "long.wav"), long_form=True)
        if long.audio_s <= LONG_MIN_S:
            raise ClipError(f"the long clip is {long.audio_s:.1f} s, not over {LONG_MIN_S:.0f} s")
        clips.append(long)
    return clips


def clip_set(name: str, sentences: int, long_clip: bool) -> list[Clip]:
    """The clips of set ``name`` (``clean`` or ``snr<dB>``); ClipError when they cannot be made."""
    snr_db = snr_of(name)
    clips = clean_clips(sentences, long_clip)
    if snr_db is None:
        return clips
    return [
        Clip(
            c.clip_id,
            c.text,
            add_noise(c.audio, snr_db, zlib.crc32(c.clip_id.encode())),
            c.long_form,
        )
        for c in clips
    ]


def clip_set_sha256(clips: list[Clip]) -> str:
    """A fingerprint of the audio and texts of ``clips``, in order."""
    import numpy as np

    digest = hashlib.sha256()
    for clip in clips:
        digest.update(clip.clip_id.encode() + b"\0" + clip.text.encode() + b"\0")
        digest.update(np.ascontiguousarray(clip.audio, dtype="<f4").tobytes())
    return digest.hexdigest()
