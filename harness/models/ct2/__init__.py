"""CTranslate2 model directories read with numpy alone, and Whisper converted for mlx-audio.

``convert_whisper_ct2`` writes a Hugging Face-layout Whisper that ``mlx_audio.stt.load`` (and
:func:`load_whisper`, the float32 variant) loads offline; every problem with the input is a
one-line :class:`CT2FormatError`.
"""

from __future__ import annotations

from harness.models.ct2.asr import load_whisper, read_wav, transcribe, word_error_rate
from harness.models.ct2.errors import CT2FormatError
from harness.models.ct2.model_bin import CT2Model, read_model_bin, write_model_bin
from harness.models.ct2.whisper import CONVERTER_VERSION, ConversionSummary, convert_whisper_ct2

__all__ = [
    "CONVERTER_VERSION",
    "CT2FormatError",
    "CT2Model",
    "ConversionSummary",
    "convert_whisper_ct2",
    "load_whisper",
    "read_model_bin",
    "read_wav",
    "transcribe",
    "word_error_rate",
    "write_model_bin",
]
