"""GGUF -> MLX conversion of tiny GGUF files written here: exact weights, configs, generation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.models.gguf.archs import GEMMA3_RULES, LLAMA_RULES, ArchSpec, arch_spec
from harness.models.gguf.convert import ImportSummary, import_gguf
from harness.models.gguf.reader import read_gguf, read_gguf_header
from harness.models.gguf.synthetic import TinyGGUF, tiny_gemma3, tiny_llama

FILES = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> TinyGGUF:
    return tiny_llama(tmp_path_factory.mktemp("gguf") / "tiny-llama.gguf")


@pytest.fixture(scope="module")
def converted(llama: TinyGGUF, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mlx")
    return {
        dtype: import_gguf(llama.path, root / dtype, dtype).output
        for dtype in ("keep", "float32", "bfloat16")
    }


def _weights(path: Path) -> dict[str, Any]:
    import mlx.core as mx

    weights = mx.load(str(path / "model.safetensors"))
    assert isinstance(weights, dict)
    return weights


def _config(path: Path) -> dict[str, Any]:
    return dict(json.loads((path / "config.json").read_text()))


def _mlx_name(spec: ArchSpec, gguf_name: str) -> str:
    found = spec.rule_for(gguf_name)
    assert found is not None, gguf_name
    return found[1]


def test_summary_counts(llama: TinyGGUF, tmp_path: Path) -> None:
    summary = import_gguf(llama.path, tmp_path / "out")
    assert isinstance(summary, ImportSummary)
    assert summary.architecture == "llama" and summary.model_type == "llama"
    assert summary.tensor_types == {
        "F16": 2,
        "F32": 6,
        "Q4_0": 8,
        "Q4_1": 1,
        "Q5_0": 1,
        "Q6_K": 1,
        "Q8_0": 2,
    }
    assert summary.kept_quantized == 12 and summary.dequantized == 1  # Q6_K -> float32
    assert summary.output_bytes == sum((tmp_path / "out" / f).stat().st_size for f in FILES)
    assert json.loads(json.dumps(summary.to_dict()))["dtype"] == "keep"


def test_keep_writes_per_layer_quantization(converted: dict[str, Path]) -> None:
    config = _config(converted["keep"])
    assert {p.name for p in converted["keep"].iterdir()} == FILES
    quant = config["quantization"]
    assert (quant["group_size"], quant["bits"], quant["mode"]) == (32, 4, "affine")
    assert quant["model.embed_tokens"]["bits"] == 8
    assert quant["model.layers.1.self_attn.k_proj"]["bits"] == 8
    assert quant["model.layers.1.self_attn.v_proj"]["bits"] == 5
    assert config["quantization_config"] == quant
    assert config["tie_word_embeddings"] is False
    weights = _weights(converted["keep"])
    assert "model.layers.1.mlp.down_proj.scales" not in weights  # Q6_K was dequantized
    assert str(weights["model.layers.1.mlp.down_proj.weight"].dtype) == "mlx.core.float32"
    assert str(weights["model.layers.0.self_attn.k_proj.weight"].dtype) == "mlx.core.float16"
    assert "model.layers.0.self_attn.q_proj.scales" not in weights  # F32 stays dense


def test_float32_has_the_reference_weights(llama: TinyGGUF, converted: dict[str, Path]) -> None:
    weights = _weights(converted["float32"])
    assert not any(name.endswith(".scales") for name in weights)
    assert "quantization" not in _config(converted["float32"])
    types = {t.name: t.type_name for t in read_gguf(llama.path).tensors}
    spec = arch_spec(read_gguf(llama.path))
    for gguf_name, hf in llama.reference.items():
        got = np.array(weights[_mlx_name(spec, gguf_name)])
        assert str(got.dtype) == "float32"
        if types[gguf_name] in ("F32", "Q6_K"):
            np.testing.assert_array_equal(got, hf, err_msg=gguf_name)  # incl. Q un-permute
        elif types[gguf_name] == "F16":
            np.testing.assert_array_equal(got, hf.astype(np.float16).astype(np.float32))
        else:  # quantization error only: a wrong row order would be off by ~hf itself
            bound = {"Q8_0": 0.01, "Q5_0": 0.03, "Q4_1": 0.05, "Q4_0": 0.06}[types[gguf_name]]
            assert np.abs(got - hf).max() < bound * np.abs(hf).max() * 4, gguf_name


def test_kept_quantized_layers_dequantize_exactly(converted: dict[str, Path]) -> None:
    import mlx.core as mx

    kept, dense = _weights(converted["keep"]), _weights(converted["float32"])
    quantized = [n.removesuffix(".scales") for n in kept if n.endswith(".scales")]
    assert len(quantized) == 12
    for base in quantized:
        w = kept[f"{base}.weight"]
        bits = w.shape[-1] * 32 // dense[f"{base}.weight"].shape[-1]
        scales = kept[f"{base}.scales"].astype(mx.float32)
        biases = kept[f"{base}.biases"].astype(mx.float32)
        values = mx.dequantize(w, scales, biases, group_size=32, bits=bits)
        np.testing.assert_array_equal(np.array(values), np.array(dense[f"{base}.weight"]), base)


def test_bfloat16_is_all_bfloat16(converted: dict[str, Path]) -> None:
    weights = _weights(converted["bfloat16"])
    assert {str(w.dtype) for w in weights.values()} == {"mlx.core.bfloat16"}


@pytest.mark.parametrize("dtype", ["keep", "float32", "bfloat16"])
def test_loads_and_generates_with_mlx_lm(converted: dict[str, Path], dtype: str) -> None:
    from mlx_lm import generate, load

    model, tokenizer, *_ = load(str(converted[dtype]))
    messages = [{"role": "user", "content": "hello world"}]
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert prompt.endswith("<|im_start|>assistant\n")
    assert tokenizer.encode("<|im_end|>") == [2]
    text = generate(model, tokenizer, prompt, max_tokens=6)
    assert isinstance(text, str)


def test_tied_embeddings(tmp_path: Path) -> None:
    tiny = tiny_llama(tmp_path / "tied.gguf", tied=True)
    out = import_gguf(tiny.path, tmp_path / "out").output
    assert _config(out)["tie_word_embeddings"] is True
    assert "lm_head.weight" not in _weights(out)


def test_header_reads_metadata_only(llama: TinyGGUF) -> None:
    header = read_gguf_header(llama.path)
    assert header.architecture == "llama"
    assert header.get("block_count") == 2 and header.get("embedding_length") == 64
    assert header.tensor_count == 21 and header.tensor_types["Q4_0"] == 8
    assert header.array_lengths["tokenizer.ggml.tokens"] > 256
    assert "tokenizer.ggml.tokens" not in header.metadata
    assert header.metadata["tokenizer.ggml.pre"] == "smollm"


def test_gemma3_norms_and_bos(tmp_path: Path) -> None:
    from mlx_lm import generate, load

    tiny = tiny_gemma3(tmp_path / "gemma.gguf")
    out = import_gguf(tiny.path, tmp_path / "out", "float32").output
    config = _config(out)
    assert config["model_type"] == "gemma3_text" and config["head_dim"] == 32
    assert config["query_pre_attn_scalar"] == 32 and config["sliding_window_pattern"] == 6
    weights = _weights(out)
    spec = arch_spec(read_gguf(tiny.path))
    for gguf_name, hf in tiny.reference.items():
        got = np.array(weights[_mlx_name(spec, gguf_name)])
        tol = 1e-6 if hf.ndim == 1 else 0.01  # norms: (w + 1) - 1; matrices: Q8_0
        np.testing.assert_allclose(got, hf, atol=tol, err_msg=gguf_name)  # no permutation
    model, tokenizer, *_ = load(str(out))
    ids = tokenizer.encode("the capital of France is")
    assert ids[0] == 2 and ids.count(2) == 1  # <bos> added once
    assert tokenizer.decode(ids[1:]) == "the capital of France is"
    assert isinstance(generate(model, tokenizer, "hello world", max_tokens=4), str)


def test_rule_tables_have_unique_names() -> None:
    for rules in (LLAMA_RULES, GEMMA3_RULES):
        assert len({r.gguf for r in rules}) == len(rules)
        assert len({r.mlx for r in rules}) == len(rules)
