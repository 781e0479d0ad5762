"""Rebuild a Hugging Face ``tokenizers`` tokenizer from GGUF ``tokenizer.ggml.*`` metadata.

* ``gpt2`` model: byte-level BPE from ``tokens`` + ``merges``; the pre-tokenizer follows
  ``tokenizer.ggml.pre`` (``smollm`` splits digits one by one, ``llama-bpe`` is Llama 3's regex).
* ``llama`` model (SentencePiece, e.g. Gemma): BPE with byte fallback whose merges are derived
  from the token scores (a pair merges with the priority of the token it forms), spaces as ``▁``.

Token types 3 (control) become special added tokens; type 4 (user-defined) become added tokens
matched on the raw text but not special (so decoding never drops them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.models.gguf.errors import GGUFImportError
from harness.models.gguf.reader import GGUFFile

NORMAL, CONTROL, USER_DEFINED = 1, 3, 4
SPIECE_SPACE = "\u2581"
LLAMA3_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
BPE_PRE_TOKENIZERS = ("default", "gpt2", "smollm", "llama-bpe")


@dataclass(frozen=True)
class TokenizerFiles:
    """``tokenizer_json`` is the serialized tokenizer; ``config`` is tokenizer_config.json."""

    tokenizer_json: str
    config: dict[str, Any]
    bos_token_id: int | None
    eos_token_ids: tuple[int, ...]


def _meta(gguf: GGUFFile, key: str, default: Any = None) -> Any:
    value = gguf.metadata.get(f"tokenizer.ggml.{key}", default)
    return value.item() if hasattr(value, "item") else value


def build_tokenizer(gguf: GGUFFile) -> TokenizerFiles:
    """Build tokenizer.json and tokenizer_config.json contents from the file's metadata."""
    from tokenizers import AddedToken, Tokenizer

    tokens = gguf.metadata.get("tokenizer.ggml.tokens")
    kind = _meta(gguf, "model")
    if not tokens or kind is None:
        raise GGUFImportError(
            gguf.path,
            "no tokenizer in the metadata (tokenizer.ggml.*)",
            "Use a GGUF exported with its tokenizer (any llama.cpp export).",
        )
    types = list(_meta_array(gguf, "token_type", [NORMAL] * len(tokens)))
    if kind == "gpt2":
        tok = _byte_level_bpe(gguf, tokens)
    elif kind == "llama":
        tok = _sentencepiece_bpe(gguf, tokens, types)
    else:
        raise GGUFImportError(
            gguf.path,
            f"unsupported tokenizer model {kind!r}",
            "Supported tokenizer.ggml.model values: gpt2, llama.",
        )
    assert isinstance(tok, Tokenizer)
    added = [
        AddedToken(tokens[i], special=types[i] == CONTROL, normalized=False)
        for i in range(len(tokens))
        if types[i] in (CONTROL, USER_DEFINED)
    ]
    tok.add_tokens(added)
    return _finish(gguf, tok, tokens)


def _meta_array(gguf: GGUFFile, key: str, default: Any) -> Any:
    value = gguf.metadata.get(f"tokenizer.ggml.{key}")
    return default if value is None else [int(v) if key == "token_type" else v for v in value]


def _byte_level_bpe(gguf: GGUFFile, tokens: tuple[str, ...]) -> Any:
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    merges_raw = gguf.metadata.get("tokenizer.ggml.merges") or ()
    merges = [tuple(m.split(" ", 1)) for m in merges_raw]
    vocab = {t: i for i, t in reversed(list(enumerate(tokens)))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    pre = _meta(gguf, "pre", "default")
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre in ("default", "gpt2"):
        tok.pre_tokenizer = byte_level
    elif pre == "smollm":
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), byte_level]
        )
    elif pre == "llama-bpe":
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    else:
        raise GGUFImportError(
            gguf.path,
            f"unsupported BPE pre-tokenizer {pre!r} (tokenizer.ggml.pre)",
            f"Supported: {', '.join(BPE_PRE_TOKENIZERS)}.",
        )
    tok.decoder = decoders.ByteLevel()
    return tok


def spm_merges(tokens: tuple[str, ...], scores: Any, types: list[int]) -> list[tuple[str, str]]:
    """BPE merges equivalent to SentencePiece BPE: every split of a normal token into two
    vocabulary pieces, ranked by the score of the token it forms (higher merges first)."""
    pieces = {t: i for i, t in enumerate(tokens) if types[i] == NORMAL}
    ranked: list[tuple[float, int, int, int, str, str]] = []
    for token, token_id in pieces.items():
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in pieces and right in pieces:
                score = -float(scores[token_id])
                ranked.append((score, token_id, pieces[left], pieces[right], left, right))
    ranked.sort()
    return [(left, right) for *_, left, right in ranked]


def _sentencepiece_bpe(gguf: GGUFFile, tokens: tuple[str, ...], types: list[int]) -> Any:
    from tokenizers import Tokenizer, decoders, models, normalizers

    scores = gguf.metadata.get("tokenizer.ggml.scores")
    if scores is None:
        raise GGUFImportError(
            gguf.path,
            "SentencePiece tokenizer without tokenizer.ggml.scores",
            "Re-export the model with a current llama.cpp.",
        )
    unk_id = int(_meta(gguf, "unknown_token_id", 0))
    vocab = {t: i for i, t in reversed(list(enumerate(tokens)))}
    model = models.BPE(
        vocab=vocab,
        merges=spm_merges(tokens, scores, types),
        unk_token=tokens[unk_id],
        fuse_unk=True,
        byte_fallback=True,
    )
    tok = Tokenizer(model)
    space_prefix = bool(_meta(gguf, "add_space_prefix", True))
    replace = normalizers.Replace(" ", SPIECE_SPACE)
    tok.normalizer = (
        normalizers.Sequence([normalizers.Prepend(SPIECE_SPACE), replace])
        if space_prefix
        else replace
    )
    steps = [decoders.Replace(SPIECE_SPACE, " "), decoders.ByteFallback(), decoders.Fuse()]
    if space_prefix:
        steps.append(decoders.Strip(" ", 1, 0))
    tok.decoder = decoders.Sequence(steps)
    return tok


def _finish(gguf: GGUFFile, tok: Any, tokens: tuple[str, ...]) -> TokenizerFiles:
    from tokenizers import processors

    def token(key: str) -> tuple[int | None, str | None]:
        idx = _meta(gguf, f"{key}_token_id")
        if idx is None or not 0 <= int(idx) < len(tokens):
            return None, None
        return int(idx), tokens[int(idx)]

    bos_id, bos = token("bos")
    eos_id, eos = token("eos")
    add_bos = bool(_meta(gguf, "add_bos_token", _meta(gguf, "model") == "llama"))
    add_bos = add_bos and bos is not None
    add_eos = bool(_meta(gguf, "add_eos_token", False)) and eos is not None
    if add_bos or add_eos:
        single = [bos] * add_bos + ["$A"] + [eos] * add_eos
        pair = single + [f"{t}:1" if t != "$A" else "$B:1" for t in single]
        specials = [(t, i) for t, i, on in ((bos, bos_id, add_bos), (eos, eos_id, add_eos)) if on]
        tok.post_processor = processors.TemplateProcessing(
            single=single, pair=pair, special_tokens=specials
        )
    eos_ids = tuple(
        dict.fromkeys(i for i in (eos_id, token("eot")[0], token("eom")[0]) if i is not None)
    )
    config: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "add_bos_token": bool(add_bos),
        "add_eos_token": bool(add_eos),
        "clean_up_tokenization_spaces": False,
        "model_max_length": int(gguf.metadata.get(f"{gguf.architecture}.context_length", 2048)),
    }
    for key in ("bos", "eos", "unknown", "padding"):
        name = token(key)[1]
        if name is not None:
            config[{"unknown": "unk_token", "padding": "pad_token"}.get(key, f"{key}_token")] = name
    template = gguf.metadata.get("tokenizer.chat_template")
    if isinstance(template, str) and template:
        config["chat_template"] = template
    return TokenizerFiles(tok.to_str(), config, bos_id, eos_ids)
