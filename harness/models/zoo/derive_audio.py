"""Tiny audio-model configurations derived from mlx-audio's own config classes (not written per
family): every integer size field of a model package's ``ModelConfig`` dataclass defaults, at
any depth of nesting, named in :data:`SIZES` is shrunk, and the model is built the way
``mlx_audio.utils.base_load_model`` builds it (``ModelConfig.from_dict`` -> ``Model``).

Families whose sizes live under other names stay large (``NOT_SHRUNK`` in the matrix, no
weights written); families whose config needs a field with no default fail with their own
error. Both are findings of the family sweep (:mod:`.audio_trial`), one line each.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.models.zoo.tiny_sizes import DENSE, EXPERTS, POSITIONS, VOCAB

KINDS = ("tts", "stt")
NOT_MODELS = frozenset({"base", "interpolate"})  # modules of the models packages, no family
SIZES: Mapping[str, int] = MappingProxyType(
    {
        **DENSE,
        "vocab_size": VOCAB,
        **EXPERTS,
        "max_position_embeddings": POSITIONS,
        "n_layer": 2,
        "n_layers": 2,
        "num_layers": 2,
        "n_head": 4,
        "n_heads": 4,
        "d_model": 64,
        "dim": 64,
        "d_ff": 128,
        "ffn_dim": 128,
        "hidden_dim": 64,
        "encoder_layers": 2,
        "decoder_layers": 2,
        "encoder_attention_heads": 4,
        "decoder_attention_heads": 4,
        "encoder_ffn_dim": 128,
        "decoder_ffn_dim": 128,
    }
)
MAX_PARAMS = 20_000_000  # more than this after shrinking: sizes under names SIZES lacks


def family_names() -> list[str]:
    """``<kind>/<model_type>`` for each model package of the installed mlx-audio's tts and stt."""
    names: list[str] = []
    for kind in KINDS:
        package = importlib.import_module(f"mlx_audio.{kind}.models")
        names.extend(
            f"{kind}/{m.name}"
            for m in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)
            if m.ispkg and m.name not in NOT_MODELS
        )
    return names


def _defaults(cls: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            value = f.default
        elif f.default_factory is not dataclasses.MISSING:
            value = f.default_factory()
        else:
            value = None  # required: left for the family's own checks to name
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = dataclasses.asdict(value)
        out[f.name] = value
    return out


def shrink(values: Any, sizes: Mapping[str, int] = SIZES) -> Any:
    """``values`` with every integer (or unset) field named in ``sizes`` made tiny, nested
    mappings included."""
    if not isinstance(values, Mapping):
        return values
    return {
        key: (
            sizes[key]
            if key in sizes and (value is None or type(value) is int)
            else shrink(value, sizes)
        )
        for key, value in values.items()
    }


def config_class(kind: str, model_type: str) -> Any:
    """The ``ModelConfig`` class of ``mlx_audio.<kind>.models.<model_type>`` (or None)."""
    module = importlib.import_module(f"mlx_audio.{kind}.models.{model_type}")
    return getattr(module, "ModelConfig", None)


def tiny_config(kind: str, model_type: str) -> dict[str, Any]:
    """A ``config.json`` for ``model_type`` from its ``ModelConfig`` defaults, shrunk."""
    cls = config_class(kind, model_type)
    if cls is None or not dataclasses.is_dataclass(cls):
        raise ValueError(f"mlx_audio.{kind}.models.{model_type} has no ModelConfig dataclass")
    return {**shrink(_defaults(cls)), "model_type": model_type}


def build_tiny(kind: str, model_type: str, out_dir: Path, *, seed: int = 0) -> int:
    """Build ``model_type`` tiny, write config.json and model.safetensors into ``out_dir``;
    return the parameter count. ValueError (one line) when it does not shrink."""
    import mlx.core as mx
    from mlx.utils import tree_flatten

    module = importlib.import_module(f"mlx_audio.{kind}.models.{model_type}")
    config = tiny_config(kind, model_type)
    mx.random.seed(seed)
    model = module.Model(module.ModelConfig.from_dict({**config, "model_path": str(out_dir)}))
    leaves: Any = tree_flatten(model.parameters())  # a list of (name, array) pairs; lazy
    params = sum(int(array.size) for _name, array in leaves)
    if params > MAX_PARAMS:
        raise ValueError(f"{params} parameters after shrinking: its sizes have other names")
    out_dir.mkdir(parents=True, exist_ok=True)
    mx.save_safetensors(str(out_dir / "model.safetensors"), dict(leaves))
    (out_dir / "config.json").write_text(json.dumps(config, default=str, indent=2) + "\n")
    return params
