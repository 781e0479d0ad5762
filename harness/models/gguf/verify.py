"""Check an imported SentencePiece-style tokenizer against the real SentencePiece library.

The GGUF metadata of a ``llama``-model tokenizer (Gemma, Llama 2, ...) is enough to rebuild the
SentencePiece BPE model itself; encoding the same texts with it and with the imported
``tokenizer.json`` must give the same ids. Needs ``sentencepiece`` and ``protobuf``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.models.gguf.reader import GGUFFile


@dataclass(frozen=True)
class Mismatch:
    text: str
    reference: tuple[str, ...]
    imported: tuple[str, ...]


def sentencepiece_reference(gguf: GGUFFile) -> Any:
    """A ``sentencepiece.SentencePieceProcessor`` rebuilt from the file's tokenizer metadata."""
    import importlib

    import sentencepiece

    pb: Any = importlib.import_module("sentencepiece.sentencepiece_model_pb2")

    meta = gguf.metadata
    tokens = meta["tokenizer.ggml.tokens"]
    scores = meta["tokenizer.ggml.scores"]
    types = meta.get("tokenizer.ggml.token_type", [1] * len(tokens))
    proto = pb.ModelProto()
    proto.trainer_spec.model_type = pb.TrainerSpec.BPE
    proto.trainer_spec.byte_fallback = True
    proto.trainer_spec.vocab_size = len(tokens)
    for key, field in (("unknown", "unk_id"), ("bos", "bos_id"), ("eos", "eos_id")):
        value = meta.get(f"tokenizer.ggml.{key}_token_id")
        setattr(proto.trainer_spec, field, -1 if value is None else int(value))
    proto.trainer_spec.pad_id = int(meta.get("tokenizer.ggml.padding_token_id", -1))
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = bool(meta.get("tokenizer.ggml.add_space_prefix", True))
    proto.normalizer_spec.remove_extra_whitespaces = False
    proto.normalizer_spec.escape_whitespaces = True
    for token, score, kind in zip(tokens, scores, types, strict=True):
        piece = proto.pieces.add()
        piece.piece = token
        piece.score = float(score)
        piece.type = int(kind)  # GGUF token types use SentencePiece's numbering
    return sentencepiece.SentencePieceProcessor(model_proto=proto.SerializeToString())


def compare_with_sentencepiece(
    gguf: GGUFFile, tokenizer_json: Path, texts: Iterable[str]
) -> list[Mismatch]:
    """Texts whose ids differ between SentencePiece and the imported tokenizer.

    Texts with runs of spaces or tabs are skipped: user-defined whitespace tokens are matched on
    the raw text by llama.cpp and Hugging Face, but never by SentencePiece itself."""
    from tokenizers import Tokenizer

    reference = sentencepiece_reference(gguf)
    imported = Tokenizer.from_file(str(tokenizer_json))
    found = []
    for text in texts:
        if "  " in text or "\t" in text:
            continue
        want = reference.encode(text)
        got = imported.encode(text, add_special_tokens=False).ids
        if want != got:
            found.append(
                Mismatch(
                    text,
                    tuple(reference.id_to_piece(i) for i in want),
                    tuple(imported.id_to_token(i) or "?" for i in got),
                )
            )
    return found
