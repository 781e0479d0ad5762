"""Text-to-speech zoo families (mlx-audio): tiny random models that run end to end here.

Kept apart from :data:`harness.models.zoo.families.FAMILIES` (whose table tests hold every
family to the text and vision layout and an 8 MiB budget): a TTS model carries a vocoder whose
size its config does not set. Soprano's Vocos decoder is fixed by mlx-audio's code (512 wide, 8
layers: ~13 M parameters, ~50 MB float32), the rest is shrunk.

Soprano is chosen because it needs nothing from the network: a Qwen3 language model over a
tokenizer (written here) whose hidden states its own Vocos decoder turns into 32 kHz audio.
Families that fetch a codec (Mimi, DAC, SNAC) or need a G2P package missing here cannot run
offline; the family sweep (:mod:`harness.families.audio`) says which and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness.models.zoo.family import VOCAB_SIZE, Family, frozen
from harness.models.zoo.tiny_sizes import DENSE, POSITIONS

SOPRANO = Family(
    name="soprano",
    backend="mlx_audio",
    config=frozen(
        {
            "model_type": "soprano",
            **DENSE,
            "vocab_size": VOCAB_SIZE,
            "max_position_embeddings": POSITIONS,
            "rms_norm_eps": 1e-6,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,  # soprano reads lm_head directly
            "sample_rate": 32000,
        }
    ),
    chat_template=None,
    special_tokens=("[STOP]", "[TEXT]", "[START]"),
    bos_token=None,
    eos_token="[STOP]",
    tags=("audio", "tts", "tiny", "random"),
    notes="Soprano: Qwen3 LM (shrunk) + Vocos decoder (fixed size in mlx-audio), 32 kHz; "
    "prompt [STOP][TEXT]text[START], generation stops at [STOP] or max_tokens.",
)

AUDIO_FAMILIES: Mapping[str, Family] = MappingProxyType({SOPRANO.name: SOPRANO})
