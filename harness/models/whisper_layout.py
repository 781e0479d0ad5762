"""The Hugging Face file layout of an English-only Whisper: special tokens, timestamps, features.

Shared by the zoo's tiny Whisper and the CTranslate2 converter so both write what mlx-audio
(through transformers' WhisperProcessor) expects.
"""

from __future__ import annotations

from typing import Any

# After the text vocabulary, in OpenAI's order for an English-only model (``<|endoftext|>``
# first: the decoder treats every id below it as text).
SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|startoftranscript|>",
    "<|en|>",
    "<|translate|>",
    "<|transcribe|>",
    "<|startoflm|>",
    "<|startofprev|>",
    "<|nocaptions|>",
    "<|notimestamps|>",
)
# Then ``<|0.00|>`` .. ``<|30.00|>`` in 0.02 s steps, the last ids of the vocabulary.
TIMESTAMPS = 1501


def timestamp_tokens(count: int = TIMESTAMPS) -> tuple[str, ...]:
    """Whisper's timestamp tokens ``<|0.00|>`` .. ``<|30.00|>`` (0.02 s apart)."""
    return tuple(f"<|{i * 0.02:.2f}|>" for i in range(count))


def preprocessor_config(num_mel_bins: int = 80) -> dict[str, Any]:
    """``preprocessor_config.json``: 16 kHz, 25 ms windows, 10 ms hop, 30 s chunks."""
    return {
        "feature_extractor_type": "WhisperFeatureExtractor",
        "processor_class": "WhisperProcessor",
        "feature_size": num_mel_bins,
        "sampling_rate": 16000,
        "hop_length": 160,
        "n_fft": 400,
        "chunk_length": 30,
        "n_samples": 480000,
        "nb_max_frames": 3000,
        "padding_side": "right",
        "padding_value": 0.0,
        "return_attention_mask": False,
    }
