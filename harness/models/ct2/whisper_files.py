"""The Hugging Face side files of a converted Whisper: tokenizer, config, generation config.

CTranslate2 Whisper directories carry the Hugging Face ``tokenizer.json`` of the source model
and a ``config.json`` with ``alignment_heads``, ``suppress_ids``, ``suppress_ids_begin`` and
``lang_ids``. The tokenizer stops at ``<|notimestamps|>``: the 1501 timestamp tokens
``<|0.00|>`` .. ``<|30.00|>`` that fill the rest of the embedding table are appended here
(without them mlx-audio finds no ``<|0.00|>`` and every transcript comes out as ".").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.models.ct2.errors import CT2FormatError
from harness.models.ct2.whisper_weights import WhisperDims
from harness.models.whisper_layout import TIMESTAMPS, timestamp_tokens

if TYPE_CHECKING:
    from tokenizers import Tokenizer

EOT = "<|endoftext|>"
SOT = "<|startoftranscript|>"
NO_TIMESTAMPS = "<|notimestamps|>"
_SPECIAL = (EOT, SOT, "<|transcribe|>", "<|translate|>", "<|startofprev|>", NO_TIMESTAMPS)


def whisper_tokenizer(src_dir: Path, vocab_size: int) -> tuple[Tokenizer, int]:
    """The source tokenizer with the timestamp tokens appended (when missing), checked to fill
    exactly ``vocab_size`` ids and, if ``vocabulary.txt`` is there, to agree with it line by line.
    Returns the tokenizer and how many tokens were appended."""
    from tokenizers import AddedToken, Tokenizer

    path = src_dir / "tokenizer.json"
    if not path.is_file():
        raise CT2FormatError(path, "missing", "The CTranslate2 directory must carry tokenizer.json")
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception for malformed JSON
        raise CT2FormatError(path, f"not a Hugging Face tokenizer: {exc}") from None
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    missing = [token for token in _SPECIAL if token not in vocab]
    if missing:
        raise CT2FormatError(path, f"no Whisper special tokens {missing}")
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    appended = 0
    if "<|0.00|>" not in vocab:
        if vocab[NO_TIMESTAMPS] != size - 1:
            raise CT2FormatError(path, f"{NO_TIMESTAMPS} is not the last token; cannot append")
        stamps = timestamp_tokens()
        appended = tokenizer.add_tokens(
            [AddedToken(t, special=False, normalized=False) for t in stamps]
        )
        if tokenizer.token_to_id(stamps[0]) != size or appended != TIMESTAMPS:
            raise CT2FormatError(path, "timestamp tokens did not get consecutive ids")
    total = tokenizer.get_vocab_size(with_added_tokens=True)
    if total != vocab_size:
        raise CT2FormatError(
            path, f"{total} tokens (with timestamps) but the model has {vocab_size} embedding rows"
        )
    _check_vocabulary_txt(src_dir / "vocabulary.txt", tokenizer, vocab_size)
    return tokenizer, appended


def _check_vocabulary_txt(path: Path, tokenizer: Tokenizer, vocab_size: int) -> None:
    if not path.is_file():
        return
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != vocab_size:
        raise CT2FormatError(path, f"{len(lines)} tokens, the model has {vocab_size} rows")
    for index, line in enumerate(lines):
        if tokenizer.id_to_token(index) != line:
            raise CT2FormatError(
                path,
                f"token {index} is {line!r}, tokenizer.json has {tokenizer.id_to_token(index)!r}",
            )


def read_ct2_config(src_dir: Path) -> dict[str, Any]:
    """CTranslate2's Whisper ``config.json`` (alignment heads and suppressed ids)."""
    path = src_dir / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CT2FormatError(path, f"cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise CT2FormatError(path, f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CT2FormatError(path, "not a JSON object")
    for key in ("suppress_ids", "suppress_ids_begin", "alignment_heads"):
        value = data.get(key)
        if value is not None and not isinstance(value, list):
            raise CT2FormatError(path, f"{key} is not a list")
    return data


def hf_config(dims: WhisperDims, tokenizer: Tokenizer, ct2: dict[str, Any]) -> dict[str, Any]:
    """``config.json`` in the layout of ``openai/whisper-*`` repositories."""
    ids = _token_ids(tokenizer)
    return {
        "model_type": "whisper",
        "architectures": ["WhisperForConditionalGeneration"],
        "activation_function": "gelu",
        "num_mel_bins": dims.num_mel_bins,
        "d_model": dims.d_model,
        "encoder_layers": dims.encoder_layers,
        "encoder_attention_heads": dims.encoder_attention_heads,
        "encoder_ffn_dim": dims.ffn_dim,
        "decoder_layers": dims.decoder_layers,
        "decoder_attention_heads": dims.decoder_attention_heads,
        "decoder_ffn_dim": dims.ffn_dim,
        "num_hidden_layers": dims.encoder_layers,
        "max_source_positions": dims.max_source_positions,
        "max_target_positions": dims.max_target_positions,
        "max_length": dims.max_target_positions,
        "vocab_size": dims.vocab_size,
        "scale_embedding": False,
        "tie_word_embeddings": True,
        "is_encoder_decoder": True,
        "use_cache": True,
        "torch_dtype": "float32",
        "bos_token_id": ids[SOT],
        "decoder_start_token_id": ids[SOT],
        "eos_token_id": ids[EOT],
        "pad_token_id": ids[EOT],
        "begin_suppress_tokens": list(ct2.get("suppress_ids_begin") or []),
        "suppress_tokens": list(ct2.get("suppress_ids") or []),
    }


def generation_config(
    dims: WhisperDims, tokenizer: Tokenizer, ct2: dict[str, Any]
) -> dict[str, Any]:
    """``generation_config.json``: decoding defaults and the alignment heads mlx-audio reads."""
    ids = _token_ids(tokenizer)
    heads = ct2.get("alignment_heads") or [
        [layer, head]
        for layer in range(dims.decoder_layers // 2, dims.decoder_layers)
        for head in range(dims.decoder_attention_heads)
    ]
    for pair in heads:
        ok = isinstance(pair, list) and len(pair) == 2
        if not ok or not (
            0 <= pair[0] < dims.decoder_layers and 0 <= pair[1] < dims.decoder_attention_heads
        ):
            raise CT2FormatError("config.json", f"alignment head {pair} outside the decoder")
    multilingual = dims.vocab_size >= 51865
    config: dict[str, Any] = {
        "alignment_heads": [[int(a), int(b)] for a, b in heads],
        "begin_suppress_tokens": list(ct2.get("suppress_ids_begin") or []),
        "suppress_tokens": list(ct2.get("suppress_ids") or []),
        "bos_token_id": ids[SOT],
        "decoder_start_token_id": ids[SOT],
        "eos_token_id": ids[EOT],
        "pad_token_id": ids[EOT],
        "is_multilingual": multilingual,
        "max_initial_timestamp_index": 50,
        "max_length": dims.max_target_positions,
        "no_timestamps_token_id": ids[NO_TIMESTAMPS],
        "prev_sot_token_id": ids["<|startofprev|>"],
        "return_timestamps": False,
    }
    if multilingual:
        config["lang_to_id"] = {
            str(tokenizer.id_to_token(int(i))): int(i) for i in ct2.get("lang_ids") or []
        }
        config["task_to_id"] = {
            "transcribe": ids["<|transcribe|>"],
            "translate": ids["<|translate|>"],
        }
    else:
        config["forced_decoder_ids"] = [[1, ids[NO_TIMESTAMPS]]]
    return config


def tokenizer_config() -> dict[str, Any]:
    """``tokenizer_config.json`` for transformers' WhisperTokenizer / WhisperProcessor."""
    return {
        "tokenizer_class": "WhisperTokenizer",
        "processor_class": "WhisperProcessor",
        "bos_token": EOT,
        "eos_token": EOT,
        "unk_token": EOT,
        "pad_token": EOT,
        "add_prefix_space": False,
        "errors": "replace",
        "model_max_length": 1024,
        "clean_up_tokenization_spaces": False,
    }


def _token_ids(tokenizer: Tokenizer) -> dict[str, int]:
    ids: dict[str, int] = {}
    for token in _SPECIAL:
        found = tokenizer.token_to_id(token)
        if found is None:
            raise CT2FormatError("tokenizer.json", f"no {token}")
        ids[token] = int(found)
    return ids
