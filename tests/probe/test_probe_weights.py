"""Weights from headers: real parameter counts for packed quantized weights, bytes, shards."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from harness.models.gguf.synthetic import byte_level_vocab
from harness.models.zoo.build import MARKER
from harness.probe.files import ProbeFileError, safetensors_header
from harness.probe.installed import Stack
from harness.probe.probe import probe_model
from harness.probe.quant import parse_quantization
from harness.probe.types import LayerQuant, ReasonCode


@pytest.mark.parametrize("name", ["llama", "qwen3_moe", "lfm2", "qwen2_vl", "whisper"])
def test_zoo_parameters_match_the_builder(
    name: str, zoo_dirs: Mapping[str, Path], stack: Stack
) -> None:
    """The zoo builder counts parameters on the live MLX model; the probe reads headers.

    Whisper's file also stores the encoder's sinusoidal positions (1500 x d_model), which
    mlx-audio recomputes instead of holding as a parameter.
    """
    probe = probe_model(zoo_dirs[name], stack=stack)
    marker = json.loads((zoo_dirs[name] / MARKER).read_text())
    stored_only = 1500 * 64 if name == "whisper" else 0
    assert probe.parameters == marker["parameters"] + stored_only
    assert probe.weights_bytes == 4 * (marker["parameters"] + stored_only)  # float32
    assert probe.dtype == "F32"


def test_quantized_parameters_and_overrides(row_paths: Mapping[str, Path], stack: Stack) -> None:
    probe = probe_model(row_paths["quantized-4bit-8bit-overrides"], stack=stack)
    q = probe.quantization
    assert q is not None and (q.method, q.bits, q.group_size, q.mode) == ("mlx", 4, 32, "affine")
    assert q.overrides == (
        LayerQuant("lm_head", 8, 32, "affine"),
        LayerQuant("model.embed_tokens", 8, 32, "affine"),
    )
    # embed + lm_head: 32 x 64 each at 8 bits; q_proj 64 x 64 at 4 bits; norm 64
    assert probe.parameters == 32 * 64 * 2 + 64 * 64 + 64
    packed = 32 * 16 * 4 * 2 + 64 * 8 * 4  # uint32 words
    scales_biases = 2 * (32 * 2 * 2 * 2 + 64 * 2 * 2)  # bfloat16
    assert probe.weights_bytes == packed + scales_biases + 64 * 2
    assert probe.dtype == "BF16"


def test_gguf_parameters_from_the_tensor_directory(
    row_paths: Mapping[str, Path], stack: Stack
) -> None:
    probe = probe_model(row_paths["gguf-llama"], stack=stack)
    assert probe.format.value == "gguf"
    vocab = len(byte_level_vocab()[0])
    per_layer = 2 * 64 + 2 * 64 * 64 + 2 * 32 * 64 + 3 * 256 * 64  # norms, q/o, k/v, mlp
    assert probe.parameters == 2 * vocab * 64 + 2 * per_layer + 64
    q = probe.quantization
    assert q is not None and q.method == "gguf" and q.bits is not None and 4 < q.bits < 32
    assert q.tensor_types["Q6_K"] == 1
    assert probe.context_length is not None and probe.chat_template


def test_consolidated_duplicate_is_not_counted(row_paths: Mapping[str, Path], stack: Stack) -> None:
    probe = probe_model(row_paths["mistral-consolidated"], stack=stack)
    assert probe.weights_bytes == (16 * 8 + 4 * 8 * 8) * 2


@pytest.mark.parametrize(
    ("row", "fragment"),
    [("truncated-download", "truncated"), ("missing-shard", "missing")],
)
def test_broken_weights_are_corrupt(
    row: str, fragment: str, row_paths: Mapping[str, Path], stack: Stack
) -> None:
    probe = probe_model(row_paths[row], stack=stack)
    assert [p.code for p in probe.problems] == [ReasonCode.CORRUPT_MODEL]
    assert fragment in probe.problems[0].message


def test_safetensors_header_errors(tmp_path: Path) -> None:
    path = tmp_path / "x.safetensors"
    path.write_bytes(b"\x05")
    with pytest.raises(ProbeFileError, match="truncated"):
        safetensors_header(path)
    path.write_bytes((100).to_bytes(8, "little") + b"{}")
    with pytest.raises(ProbeFileError, match="not a safetensors"):
        safetensors_header(path)
    header = b'{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}'
    path.write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 4)
    with pytest.raises(ProbeFileError, match="4 bytes for F32"):
        safetensors_header(path)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128}},
         ("gptq", 4, 128)),
        ({"quantization_config": {"quant_method": "mxfp4"}}, ("mxfp4", 4, None)),
        ({"text_config": {"quantization_config": {"quant_method": "awq", "bits": 4}}},
         ("awq", 4, None)),
        ({"quantization": {"mode": "nvfp4"}}, ("mlx", 4, 16)),
        ({"quantization_config": {"bits": 8, "group_size": 64}}, ("mlx", 8, 64)),
    ],
)  # fmt: skip
def test_parse_quantization(config: dict, expected: tuple) -> None:  # type: ignore[type-arg]
    q = parse_quantization(config)
    assert q is not None and (q.method, q.bits, q.group_size) == expected
    assert parse_quantization({"model_type": "llama"}) is None


def test_context_length_from_nested_text_config(
    row_paths: Mapping[str, Path], stack: Stack
) -> None:
    assert probe_model(row_paths["zoo/llava"], stack=stack).context_length == 4096
    assert probe_model(row_paths["zoo/whisper"], stack=stack).context_length == 448
    assert probe_model(row_paths["gguf-gemma3"], stack=stack).text is not None


def test_compute_dtype_follows_mlx_type_promotion() -> None:
    from harness.probe.files import TensorHeader
    from harness.probe.weights import compute_dtype

    def t(name: str, dtype: str, n: int) -> TensorHeader:
        return TensorHeader(name, dtype, (n,), n * (4 if dtype == "F32" else 2))

    f16_model = (t("model.layers.0.q_proj.weight", "F16", 1000), t("model.norm.weight", "F32", 8))
    assert compute_dtype(f16_model) == "F32"  # float32 norms promote the hidden states
    bf16_model = (
        t("model.layers.0.q_proj.weight", "BF16", 1000),
        t("model.norm.weight", "BF16", 8),
    )
    assert compute_dtype(bf16_model) == "BF16"
    quantized = (
        TensorHeader("m.q_proj.weight", "U32", (100,), 400),
        t("m.q_proj.scales", "F32", 10),  # quantization data does not set the compute dtype
        t("m.norm.weight", "BF16", 8),
    )
    assert compute_dtype(quantized) == "BF16"
    assert compute_dtype(()) is None


@pytest.mark.parametrize(
    ("name", "tower"),
    [
        ("visual.blocks.0.attn.qkv.weight", True),
        ("model.visual.merger.mlp.0.weight", True),
        ("vision_tower.vision_model.embeddings.patch_embedding.weight", True),
        ("multi_modal_projector.linear_1.weight", True),
        ("model.language_model.layers.0.self_attn.q_proj.weight", False),
        ("language_model.model.embed_tokens.weight", False),
        ("model.layers.0.mlp.gate_proj.weight", False),
        ("lm_head.weight", False),
    ],
)
def test_tower_tensors_are_told_from_text_ones(name: str, tower: bool) -> None:
    from harness.probe.quant import is_tower

    assert is_tower(name) is tower


def test_text_only_estimate_leaves_the_vision_tower_out(
    zoo_dirs: Mapping[str, Path], stack: Stack
) -> None:
    from harness.probe.memory import estimate_memory

    probe = probe_model(zoo_dirs["qwen2_vl"], stack=stack)
    assert 0 < probe.tower_weights_bytes < (probe.weights_bytes or 0)
    full = estimate_memory(probe, 144, prompt_tokens=128)
    text = estimate_memory(probe, 144, prompt_tokens=128, text_only=True)
    assert full.weights_bytes - text.weights_bytes == probe.tower_weights_bytes
