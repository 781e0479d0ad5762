"""Tokenizers rebuilt from GGUF metadata: byte-level BPE (SmolLM2-style) and SentencePiece BPE
(Gemma-style), round trips and a cross-check against the SentencePiece library itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.models.gguf.reader import GGUFFile, read_gguf
from harness.models.gguf.synthetic import tiny_gemma3, tiny_llama
from harness.models.gguf.tokenizer import build_tokenizer, spm_merges

TEXTS = [
    "the capital of France is Paris",
    "hello world 12345!",
    "Paris\n\nthe world",
    "héllo wörld 🤖 中文",
    "  two spaces, a\ttab",
    "",
]


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> GGUFFile:
    return read_gguf(tiny_llama(tmp_path_factory.mktemp("t") / "llama.gguf").path)


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> GGUFFile:
    return read_gguf(tiny_gemma3(tmp_path_factory.mktemp("t") / "gemma.gguf").path)


def _tokenizer(gguf: GGUFFile):  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer

    return Tokenizer.from_str(build_tokenizer(gguf).tokenizer_json)


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("arch", ["llama", "gemma"])
def test_round_trip(llama: GGUFFile, gemma: GGUFFile, arch: str, text: str) -> None:
    tok = _tokenizer(llama if arch == "llama" else gemma)
    ids = tok.encode(text, add_special_tokens=False).ids
    assert tok.decode(ids, skip_special_tokens=False) == text


def test_byte_level_bpe_merges_and_splits_digits(llama: GGUFFile) -> None:
    tok = _tokenizer(llama)
    assert tok.encode("Paris is the capital").tokens == [
        "P",
        "a",
        "r",
        "i",
        "s",
        "Ġis",
        "Ġthe",
        "Ġcapital",
    ]
    assert tok.encode(" 2024").tokens == ["Ġ", "2", "0", "2", "4"]  # SmolLM2: one digit each
    assert tok.encode("<|im_start|>user").ids[0] == 1  # control tokens are atomic


def test_byte_level_config(llama: GGUFFile) -> None:
    files = build_tokenizer(llama)
    assert files.config["bos_token"] == "<|im_start|>" and files.config["eos_token"] == "<|im_end|>"
    assert files.config["add_bos_token"] is False
    assert "<|im_start|>assistant" in files.config["chat_template"]
    assert files.eos_token_ids == (2,)


def test_sentencepiece_bpe(gemma: GGUFFile) -> None:
    tok = _tokenizer(gemma)
    encoding = tok.encode("the capital of France is")
    assert encoding.tokens == ["<bos>", "the", "▁capital", "▁of", "▁France", "▁is"]
    assert tok.encode("🤖").tokens[1:] == ["<0xF0>", "<0x9F>", "<0xA4>", "<0x96>"]  # byte fallback
    assert tok.encode("a\nis", add_special_tokens=False).tokens == ["a", "\n", "is"]
    files = build_tokenizer(gemma)
    assert files.config["add_bos_token"] is True and files.bos_token_id == 2


def test_merges_follow_scores() -> None:
    tokens = ("a", "b", "c", "ab", "bc", "abc")
    scores = (0.0, 0.0, 0.0, -2.0, -1.0, -3.0)
    merges = spm_merges(tokens, scores, [1] * len(tokens))
    assert merges == [("b", "c"), ("a", "b"), ("a", "bc"), ("ab", "c")]


def test_matches_sentencepiece_library(gemma: GGUFFile, tmp_path: Path) -> None:
    pytest.importorskip("sentencepiece.sentencepiece_model_pb2", reason="needs protobuf")
    from harness.models.gguf.verify import compare_with_sentencepiece

    path = tmp_path / "tokenizer.json"
    path.write_text(build_tokenizer(gemma).tokenizer_json)
    words = ["the", "capital", "of", "France", "is", "Paris", "hello", "world", "cat", "é", "x"]
    texts = [*TEXTS, *(" ".join(words[i : i + 4]) for i in range(len(words)))]
    texts += ["".join(words), "France,Paris;hello\nworld", "thecapitalofFrance"]
    assert compare_with_sentencepiece(gemma, path, texts) == []
