"""Bad GGUF inputs fail with one clear line naming the file, the problem and a fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from harness.models.gguf.convert import import_gguf
from harness.models.gguf.errors import GGUFImportError
from harness.models.gguf.reader import read_gguf_header
from harness.models.gguf.synthetic import tiny_llama, write_gguf


def _tiny(tmp_path: Path) -> Path:
    return tiny_llama(tmp_path / "tiny.gguf").path


def _cut(keep: Callable[[int], int]) -> Callable[[Path], Path]:
    def make(tmp_path: Path) -> Path:
        data = _tiny(tmp_path).read_bytes()
        path = tmp_path / "cut.gguf"
        path.write_bytes(data[: keep(len(data))])
        return path

    return make


def _write(name: str, data: bytes) -> Callable[[Path], Path]:
    def make(tmp_path: Path) -> Path:
        path = tmp_path / name
        path.write_bytes(data)
        return path

    return make


def _arch(arch: str) -> Callable[[Path], Path]:
    def make(tmp_path: Path) -> Path:
        embd = np.zeros((8, 32), dtype=np.float32)
        meta = {f"{arch}.block_count": 1, f"{arch}.embedding_length": 32}
        return write_gguf(
            tmp_path / f"{arch}.gguf", arch, meta, {"token_embd.weight": (embd, "F32")}
        )

    return make


def _tensor_type(tmp_path: Path) -> Path:
    types = {"blk.1.ffn_down.weight": "TQ2_0"}
    return tiny_llama(tmp_path / "tq2.gguf", types=types).path


def _metadata(**changes: object) -> Callable[[Path], Path]:
    def make(tmp_path: Path) -> Path:
        meta = {k.replace("__", "."): v for k, v in changes.items()}
        return tiny_llama(tmp_path / "meta.gguf", metadata=meta).path

    return make


# (id, file maker, expected fragments of the message, also fails read_gguf_header)
CASES = [
    ("empty", _write("empty.gguf", b""), ["not a GGUF file"], True),
    ("bad-magic", _write("model.bin", b"PK\x03\x04" + bytes(60)), ["not a GGUF file"], True),
    ("text-file", _write("notes.gguf", b"hello world\n"), ["not a GGUF file"], True),
    ("truncated-header", _cut(lambda n: 200), ["truncated GGUF file", "header ends early"], True),
    ("truncated-data", _cut(lambda n: n - 100), ["truncated GGUF file", "needs bytes"], True),
    ("magic-only", _write("magic.gguf", b"GGUF"), ["truncated GGUF file"], True),
    ("arch-mamba", _arch("mamba"), ["unsupported architecture 'mamba'", "llama, gemma3"], False),
    ("arch-bert", _arch("bert"), ["unsupported architecture 'bert'", "Supported:"], False),
    ("tensor-type", _tensor_type, ["unsupported tensor type TQ2_0", "blk.1.ffn_down"], False),
    (
        "missing-key",
        _metadata(llama__attention__head_count=None),
        ["missing metadata key 'llama.attention.head_count'"],
        False,
    ),
    (
        "bad-merges",
        _metadata(tokenizer__ggml__merges=["zzz qqq"]),
        ["cannot build the tokenizer"],
        False,
    ),
    (
        "bad-heads",
        _metadata(llama__attention__head_count_kv=3),
        ["cannot un-permute 32 rows over 3 heads"],
        False,
    ),
    (
        "bad-pre-tokenizer",
        _metadata(tokenizer__ggml__pre="qwen2"),
        ["unsupported BPE pre-tokenizer 'qwen2'"],
        False,
    ),
]


@pytest.mark.parametrize(
    ("make", "fragments", "header_fails"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_one_clear_line(
    tmp_path: Path,
    make: Callable[[Path], Path],
    fragments: list[str],
    header_fails: bool,
) -> None:
    path = make(tmp_path)
    with pytest.raises(GGUFImportError) as info:
        import_gguf(path, tmp_path / "out")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    for fragment in fragments:
        assert fragment in message
    assert message.count(". ") >= 1, "the message should end with a fix"
    assert info.value.__cause__ is None
    assert info.value.__context__ is None or info.value.__suppress_context__
    assert not (tmp_path / "out" / "model.safetensors").exists()
    if header_fails:
        with pytest.raises(GGUFImportError, match="GGUF"):
            read_gguf_header(path)
    else:
        assert read_gguf_header(path).tensor_count >= 1


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(GGUFImportError, match="cannot read file") as info:
        import_gguf(tmp_path / "absent.gguf", tmp_path / "out")
    assert "\n" not in str(info.value)


def test_refuses_a_directory_with_other_weights(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "model-00001-of-00002.safetensors").write_bytes(b"")
    with pytest.raises(GGUFImportError, match="holds other weights") as info:
        import_gguf(_tiny(tmp_path), out)
    assert "\n" not in str(info.value)


def test_unknown_dtype_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="keep, float32, float16, bfloat16"):
        import_gguf(_tiny(tmp_path), tmp_path / "out", dtype="int4")
