"""The zoo's text families: configs derived from the installed mlx-lm plus each family's own keys.

Table-driven over ``TEXT_FAMILIES``: which families are derived and which hand-made (and why),
that every key a derived family sets is a ``ModelArgs`` field of its module or a real checkpoint
key, that the full config is the generator's plus those keys, that the built weights keep their
sizes, and that a change in the generator changes the zoo's cache key (the marker's hash).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.models.zoo import derive_text
from harness.models.zoo.build import MARKER, build, is_current
from harness.models.zoo.families_text import TEXT_FAMILIES
from harness.models.zoo.family import ConfigOrigin, DerivationError, Family, plain

FAMILY = {f.name: f for f in TEXT_FAMILIES}
DERIVED = [f for f in TEXT_FAMILIES if f.config_origin is ConfigOrigin.DERIVED]

ORIGINS = {
    "llama": ConfigOrigin.DERIVED,
    "qwen2": ConfigOrigin.DERIVED,
    "qwen3": ConfigOrigin.DERIVED,
    "gemma3_text": ConfigOrigin.DERIVED,
    "mistral": ConfigOrigin.HAND_MADE,
    "phi3": ConfigOrigin.DERIVED,
    "qwen3_moe": ConfigOrigin.DERIVED,
    "lfm2": ConfigOrigin.DERIVED,
}

# The real models' structural choices, as the full config must carry them (from the family's
# keys or from the generator's defaults alike).
REAL_CHOICES: dict[str, dict[str, Any]] = {
    "llama": {"tie_word_embeddings": True, "rope_theta": 10000.0, "rms_norm_eps": 1e-5},
    "qwen2": {"rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "tie_word_embeddings": True},
    "qwen3": {"head_dim": 32, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0},
    "gemma3_text": {
        "num_key_value_heads": 1,
        "head_dim": 16,
        "query_pre_attn_scalar": 16,
        "sliding_window": 64,
        "sliding_window_pattern": 2,
        "layer_types": ["sliding_attention", "full_attention"],
    },
    "phi3": {"partial_rotary_factor": 0.75, "tie_word_embeddings": True},
    "qwen3_moe": {"num_experts": 4, "num_experts_per_tok": 2, "norm_topk_prob": True},
    "lfm2": {
        "num_hidden_layers": 3,
        "layer_types": ["conv", "full_attention", "conv"],
        "full_attn_idxs": [1],
        "block_ff_dim": 192,
    },
}

# Parameters of each built family before its config was derived: the weights keep their sizes.
PARAMETERS = {
    "llama": 106_816,
    "qwen2": 107_072,
    "qwen3": 131_520,
    "gemma3_text": 135_808,
    "mistral": 139_584,
    "phi3": 106_816,
    "qwen3_moe": 132_032,
    "lfm2": 152_416,
}

# Checkpoint keys transformers' config class does not list (each with where real ones carry it).
OUTSIDE_TRANSFORMERS = {("lfm2", "tie_embedding")}  # LiquidAI/LFM2-* config.json; HF: tie_word_...


def _args_fields(module: str) -> set[str]:
    args = importlib.import_module(f"mlx_lm.models.{module}").ModelArgs
    return {f.name for f in dataclasses.fields(args)}


def test_origins_table() -> None:
    assert {f.name: f.config_origin for f in TEXT_FAMILIES} == ORIGINS
    for family in TEXT_FAMILIES:
        hand_made = family.config_origin is ConfigOrigin.HAND_MADE
        assert bool(family.origin_reason) == hand_made, family.name


def test_mistral_stays_hand_made_because_mlx_lm_has_no_module() -> None:
    from mlx_lm.utils import MODEL_REMAPPING

    mistral = FAMILY["mistral"]
    assert mistral.config_origin is ConfigOrigin.HAND_MADE
    assert "no mistral module" in mistral.origin_reason
    assert importlib.util.find_spec("mlx_lm.models.mistral") is None
    assert MODEL_REMAPPING["mistral"] == "llama"
    with pytest.raises(ModuleNotFoundError):
        derive_text.tiny_config("mistral")
    assert mistral.full_config() is mistral.config  # nothing derived
    assert mistral.resolved() is mistral


@pytest.mark.parametrize("family", DERIVED, ids=[f.name for f in DERIVED])
def test_family_keys_are_args_fields_or_checkpoint_keys(family: Family) -> None:
    fields = _args_fields(family.model_type)
    checkpoint = set(family.checkpoint_keys)
    assert checkpoint <= set(family.config), "a checkpoint key the family does not set"
    assert not checkpoint & fields, "a ModelArgs field listed as checkpoint-only"
    typos = set(family.config) - fields - checkpoint - {"architectures"}
    assert not typos, f"keys neither in {family.model_type}.ModelArgs nor checkpoint keys"


@pytest.mark.parametrize("family", DERIVED, ids=[f.name for f in DERIVED])
def test_checkpoint_keys_are_real_config_keys(family: Family) -> None:
    from transformers import AutoConfig

    known = set(AutoConfig.for_model(family.model_type).to_dict())
    for key in family.checkpoint_keys:
        assert key in known or (family.name, key) in OUTSIDE_TRANSFORMERS, key


@pytest.mark.parametrize("family", DERIVED, ids=[f.name for f in DERIVED])
def test_derived_config_is_generated_config_plus_family_keys(family: Family) -> None:
    generated = derive_text.tiny_config(family.model_type)
    full = plain(family.full_config())
    assert full == {**generated, **plain(family.config)}
    assert set(generated) <= set(full)  # the generator's keys all reach config.json
    assert plain(family.resolved().config) == full
    assert plain(family.resolved().resolved().config) == full


@pytest.mark.parametrize("name", list(REAL_CHOICES))
def test_full_config_keeps_the_real_models_choices(name: str) -> None:
    full = plain(FAMILY[name].full_config())
    assert {key: full.get(key) for key in REAL_CHOICES[name]} == REAL_CHOICES[name]


def test_listing_the_families_imports_no_mlx() -> None:
    code = (
        "import sys; import harness.models.zoo.families; import harness.models.catalog as c; "
        "c.embedded_models(); print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mlx', 'mlx_lm')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    root = tmp_path_factory.mktemp("zoo-text")
    dirs: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in dirs:
            dirs[name] = build(FAMILY[name], root / name)
        return dirs[name]

    return get


@pytest.mark.parametrize("name", list(PARAMETERS))
def test_built_weights_keep_their_sizes(name: str, built: Callable[[str], Path]) -> None:
    path = built(name)
    assert json.loads((path / MARKER).read_text())["parameters"] == PARAMETERS[name]
    config = json.loads((path / "config.json").read_text())
    family = FAMILY[name]
    expected = plain(family.full_config())
    assert {k: config[k] for k in expected} == expected  # token ids are added on top


def _fake_generator(change: Mapping[str, Any]) -> Callable[[str], dict[str, Any]]:
    real = derive_text.tiny_config

    def tiny_config(module_name: str) -> dict[str, Any]:
        return {**real(module_name), **change}

    return tiny_config


@pytest.mark.parametrize(
    ("name", "change", "rebuild"),
    [
        ("llama", {"rope_theta": 500000.0}, True),  # a default the family takes
        ("qwen2", {"max_position_embeddings": 2048}, True),
        ("qwen2", {"rms_norm_eps": 1e-5}, False),  # a key the family sets itself
        ("lfm2", {"new_field_of_a_newer_mlx_lm": 1}, True),  # a key a newer ModelArgs adds
        ("mistral", {"rope_theta": 500000.0}, False),  # hand-made: the generator is not used
    ],
)
def test_generator_change_changes_the_cache_key(
    name: str,
    change: Mapping[str, Any],
    rebuild: bool,
    built: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = built(name)
    assert is_current(path, FAMILY[name])
    monkeypatch.setattr(derive_text, "tiny_config", _fake_generator(change))
    assert is_current(path, FAMILY[name]) is not rebuild


def test_a_failed_derivation_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(module_name: str) -> dict[str, Any]:
        raise TypeError(f"{module_name}: field 'x' has no default\nsecond line")

    monkeypatch.setattr(derive_text, "tiny_config", broken)
    with pytest.raises(DerivationError) as info:
        FAMILY["qwen3"].full_config()
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("zoo/qwen3: the installed mlx-lm cannot derive a 'qwen3' config")
    assert "arch-matrix --only qwen3" in message
