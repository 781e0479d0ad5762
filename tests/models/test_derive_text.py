"""Tiny text-model configurations derived from mlx-lm's ModelArgs; the denominator of the matrix."""

from __future__ import annotations

import importlib
from typing import Any, Optional

import pytest

from harness.models.zoo.derive_text import (
    NOT_ARCHITECTURES,
    SIZES,
    architecture_names,
    fill_value,
    module_names,
    tiny_config,
)


def test_the_denominator_is_every_module_but_the_helpers() -> None:
    modules = module_names()
    assert set(NOT_ARCHITECTURES) <= set(modules)  # a helper gone from mlx-lm: update the table
    assert architecture_names() == [m for m in modules if m not in NOT_ARCHITECTURES]
    assert len(architecture_names()) + len(NOT_ARCHITECTURES) == len(modules)


@pytest.mark.parametrize("helper", sorted(NOT_ARCHITECTURES))
def test_each_helper_defines_no_model(helper: str) -> None:
    module = importlib.import_module(f"mlx_lm.models.{helper}")
    assert not (hasattr(module, "Model") and hasattr(module, "ModelArgs"))
    assert NOT_ARCHITECTURES[helper]  # with the reason


@pytest.mark.parametrize(
    ("name", "hint", "expected"),
    [
        ("hidden_size", int, SIZES["hidden_size"]),
        ("rms_norm_eps", float, 1e-5),
        ("hidden_act", str, "silu"),
        ("attention_bias", bool, False),
        ("some_count", int, 2),
        ("some_scale", float, 1.0),
        ("some_list", list[int], []),
        ("some_config", dict, {}),
        ("maybe_count", Optional[int], 2),  # noqa: UP045 (the hint as mlx-lm writes it)
        ("something", str, None),
    ],
)
def test_fill_value(name: str, hint: Any, expected: Any) -> None:
    assert fill_value(name, hint) == expected


def test_tiny_config_shrinks_the_defaults_and_fills_the_required() -> None:
    config = tiny_config("gemma3_text")  # defaults: hidden 1152, 26 layers, vocab 262144
    assert config["model_type"] == "gemma3_text"
    assert (config["hidden_size"], config["num_hidden_layers"]) == (64, 2)
    assert config["vocab_size"] == SIZES["vocab_size"]
    assert None not in config.values()


def test_a_wrapper_gets_its_text_model_config() -> None:
    config = tiny_config("qwen2_vl")
    assert config["text_config"]["hidden_size"] == 64
    assert config["text_config"]["model_type"] == "qwen2"


def test_a_wrapper_whose_text_config_defaults_to_none_gets_one() -> None:
    config = tiny_config("gemma4")  # text_config: dict = None, filled in __post_init__
    text = config["text_config"]
    assert (text["hidden_size"], text["model_type"]) == (64, "gemma4_text")
    assert text["vocab_size_per_layer_input"] == SIZES["vocab_size"]  # not 262144


def test_a_wrapper_of_a_wrapper_gets_the_inner_text_arguments() -> None:
    # qwen3_5_moe's text model is qwen3_5's, whose ModelArgs wraps TextModelArgs in turn
    text = tiny_config("qwen3_5_moe")["text_config"]
    assert (text["hidden_size"], text["num_hidden_layers"]) == (64, 2)
    assert text["full_attention_interval"] == 2  # a linear layer, then full attention


PER_LAYER = (
    "layer_types",
    "block_types",
    "activation_sparsity_pattern",
    "hybrid_layer_pattern",
    "moe_layer_freq",
    "block_configs",
    "layer_rope_theta",
)


def _configs() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for name in architecture_names():
        try:
            config = tiny_config(name)
        except SystemExit:  # olmo exits on import (the matrix says so)
            continue
        found.append((name, config))
        if isinstance(config.get("text_config"), dict):
            found.append((f"{name}.text_config", config["text_config"]))
    return found


def test_per_layer_lists_have_one_entry_per_layer() -> None:
    for name, config in _configs():
        layers = config.get("num_hidden_layers")
        for key in PER_LAYER:
            value = config.get(key)
            if layers is not None and isinstance(value, list) and value:  # an int is a period
                assert len(value) == layers, (name, key, value, layers)
