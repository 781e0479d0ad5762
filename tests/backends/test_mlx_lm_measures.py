"""What mlx-lm's model says a decode step reads, and its next-token log-probabilities, on a
real tiny llama generated in the test run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.backends.decode_traffic import ReportsTraffic
from harness.backends.mlx_lm import BACKEND
from harness.backends.scoring import Scoring


@pytest.fixture(scope="module")
def loaded(tiny_llama: Path):  # type: ignore[no-untyped-def]
    return BACKEND.load(tiny_llama)


def test_decode_traffic_counts_weights_and_kv(loaded, tiny_llama: Path) -> None:  # type: ignore[no-untyped-def]
    model, info = loaded
    assert isinstance(model, ReportsTraffic)
    traffic = model.decode_traffic()
    header = int.from_bytes((tiny_llama / "model.safetensors").read_bytes()[:8], "little")
    assert traffic.weight_bytes == info.weights_bytes - 8 - header  # tied: every tensor read
    config = json.loads((tiny_llama / "config.json").read_text())
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    per_layer = 2 * config["num_key_value_heads"] * head_dim * 4  # K and V, float32
    assert [layer.bytes_per_token for layer in traffic.layers] == [per_layer] * config[
        "num_hidden_layers"
    ]
    assert all(layer.window is None for layer in traffic.layers)


def test_logprobs_are_distributions_that_predict_greedy(loaded) -> None:  # type: ignore[no-untyped-def]
    model, _ = loaded
    assert isinstance(model, Scoring)
    prompt = model.encode("The capital of France is")
    logprobs = model.next_token_logprobs(prompt)
    assert logprobs.shape == (len(prompt), model.vocab_size())
    assert logprobs.dtype == np.float32
    np.testing.assert_allclose(np.exp(logprobs).sum(axis=-1), 1.0, rtol=1e-4)
    first = next(model.stream_tokens(prompt, max_tokens=2))
    assert int(np.argmax(logprobs[-1])) == first


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from harness.models.zoo.build import build
    from harness.models.zoo.families import FAMILIES

    def load(family: str):  # type: ignore[no-untyped-def]
        path = build(FAMILIES[family], tmp_path_factory.mktemp("zoo") / family)
        return BACKEND.load(path)[0], FAMILIES[family].config

    return load


def test_untied_embedding_counts_one_row(zoo) -> None:  # type: ignore[no-untyped-def]
    from mlx.utils import tree_flatten

    model, config = zoo("mistral")  # tie_word_embeddings: false
    flat = dict(tree_flatten(model.model.parameters()))
    total = sum(int(v.nbytes) for v in flat.values())
    table = int(flat["model.embed_tokens.weight"].nbytes)
    row = table // config["vocab_size"]
    assert model.decode_traffic().weight_bytes == total - table + row


def test_sliding_window_layers_are_capped(zoo) -> None:  # type: ignore[no-untyped-def]
    model, config = zoo("gemma3_text")  # sliding, full, sliding, ...
    layers = model.decode_traffic().layers
    windows = {layer.window for layer in layers}
    assert windows == {config["sliding_window"], None}
    traffic = model.decode_traffic()
    far = traffic.kv_bytes(10_000) - traffic.kv_bytes(5_000)
    full = sum(layer.bytes_per_token for layer in layers if layer.window is None)
    assert far == pytest.approx(5_000 * full)  # beyond the window only full layers grow


def test_recurrent_state_is_fixed(zoo) -> None:  # type: ignore[no-untyped-def]
    model, _ = zoo("lfm2")  # conv layers hold state that does not grow with context
    traffic = model.decode_traffic()
    assert traffic.fixed_state_bytes > 0
    assert len(traffic.layers) >= 1


def test_matmul_params_are_logical_sizes_quantized_or_not(tiny_llama: Path) -> None:
    import mlx.nn as nn
    from mlx.utils import tree_flatten

    model, _ = BACKEND.load(tiny_llama)  # its own copy: quantized below
    dense = dict(tree_flatten(model.model.parameters()))
    expected = sum(int(v.size) for name, v in dense.items() if "norm" not in name)
    assert model.decode_traffic().matmul_params == expected  # tied: the table is the head
    assert model.decode_traffic().prefill_flops_per_token == 2 * expected
    nn.quantize(model.model, group_size=32, bits=4)
    quantized = model.decode_traffic()
    assert quantized.matmul_params == expected
    assert quantized.weight_bytes < sum(int(v.nbytes) for v in dense.values())
