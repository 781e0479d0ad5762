"""A small byte-level BPE tokenizer trained locally, saved in Hugging Face format.

Real tokenizer machinery (``tokenizers`` BPE, byte-level pre-tokenizer and decoder), trained in
well under a second on a fixed corpus so it is the same on every machine.

Two pre-tokenizers (:data:`PRE_TOKENIZERS`): ``"gpt2"`` (every family's: GPT-2's byte-level
split, which keeps ``>`` apart from a following newline) and ``"qwen2"`` (Qwen2's and DeepSeek's
``Split`` on :data:`QWEN2_PATTERN`, then byte-level without its own split, as Qwen2.5's
``tokenizer.json`` has it), which keeps punctuation and the newlines after it in one piece, so
``>\n`` can be one token while ``<tool_call>`` alone ends in ``>`` (mlx-lm #1335). The ``"qwen2"``
tokenizer also learns from :data:`MARKUP_CORPUS`, whose newlines are kept (the main corpus is
read line by line).
"""

from __future__ import annotations

import json
from pathlib import Path

CORPUS = """\
The capital of France is Paris. The capital of Japan is Tokyo. The capital of Italy is Rome.
What is the weather like today? It is sunny and warm, with a light wind from the west.
Please call the function get_weather with the city name and the unit of temperature.
A language model reads a prompt, computes a cache of keys and values, and decodes tokens.
Prefill processes the prompt in large batches; decoding produces one token at a time.
def add(a, b):\n    return a + b\n\nclass Point:\n    x: int\n    y: int\n
{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
0 1 2 3 4 5 6 7 8 9 10 42 100 1000 3.14 2026-11-22
user assistant system tool function arguments name content role
Benchmarks measure throughput in tokens per second and latency in seconds.
"""

# Qwen2's pre-tokenizer pattern, as in Qwen2.5's tokenizer.json (punctuation takes the newlines
# that follow it: ``>\n`` is one piece).
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
PRE_TOKENIZERS = ("gpt2", "qwen2")

# Hermes calls with their newlines, learnt by the "qwen2" tokenizer only: its ">\n" is one token.
MARKUP_CORPUS = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}\n</tool_call>',
    "<tools>\n</tools>\n<tool_call>\n</tool_call>\n",
)
MARKUP_REPEATS = 8


def train_tokenizer(
    out_dir: Path,
    *,
    special_tokens: tuple[str, ...],
    vocab_size: int = 512,
    bos_token: str | None = None,
    appended_special_tokens: tuple[str, ...] = (),
    appended_tokens: tuple[str, ...] = (),
    pre_tokenizer: str = "gpt2",
) -> dict[str, int]:
    """Train a byte-level BPE on :data:`CORPUS` and write ``tokenizer.json`` into ``out_dir``.

    ``special_tokens`` take the first ids (as in Mistral, Gemma, LFM2), ``vocab_size`` counts
    them. ``appended_special_tokens`` then ``appended_tokens`` (not special, e.g. Whisper's
    timestamps) come after the trained vocabulary, the layout of Qwen and Whisper, whose
    decoders treat ids below the first special token as text. With ``bos_token`` the tokenizer
    prepends it to every encoding, like Gemma's and Mistral's. ``pre_tokenizer`` is one of
    :data:`PRE_TOKENIZERS`. Returns the whole vocabulary.
    """
    from tokenizers import (
        AddedToken,
        Tokenizer,
        decoders,
        models,
        pre_tokenizers,
        processors,
        trainers,
    )

    if pre_tokenizer not in PRE_TOKENIZERS:
        raise ValueError(f"pre_tokenizer {pre_tokenizer!r} is not one of {PRE_TOKENIZERS}")
    tokenizer = Tokenizer(models.BPE())
    corpus = CORPUS.splitlines() * 4
    if pre_tokenizer == "qwen2":
        from tokenizers import Regex

        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        corpus += list(MARKUP_CORPUS) * MARKUP_REPEATS
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    tokenizer.add_special_tokens(list(appended_special_tokens))
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in appended_tokens])
    if bos_token is not None:
        bos_id = tokenizer.token_to_id(bos_token)
        if bos_id is None:
            raise ValueError(f"bos token {bos_token!r} is not among the special tokens")
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{bos_token} $A",
            pair=f"{bos_token} $A {bos_token} $B",
            special_tokens=[(bos_token, bos_id)],
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out_dir / "tokenizer.json"))
    return dict(tokenizer.get_vocab(with_added_tokens=True))


def write_tokenizer_config(
    out_dir: Path,
    *,
    chat_template: str | None,
    bos_token: str | None,
    eos_token: str,
    pad_token: str | None = None,
    extra: dict[str, object] | None = None,
) -> None:
    """Write ``tokenizer_config.json`` carrying the family's chat template and special tokens.

    ``chat_template=None`` leaves the key out (Whisper has none). ``extra`` adds or overrides keys.
    """
    config: dict[str, object] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": bos_token,
        "eos_token": eos_token,
        "pad_token": pad_token or eos_token,
        "model_max_length": 4096,
        "clean_up_tokenization_spaces": False,
    }
    if chat_template is not None:
        config["chat_template"] = chat_template
    config.update(extra or {})
    (out_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
