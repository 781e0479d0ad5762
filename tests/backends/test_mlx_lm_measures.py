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
