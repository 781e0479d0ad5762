"""Tiny vision-model configurations derived from mlx-vlm's own config classes (not written per
family): each size field of a family's ``TextConfig`` / ``VisionConfig`` dataclass defaults is
shrunk to a tiny value, the model is built the way ``mlx_vlm.utils.load_model`` builds it, and a
text forward pass is run. :func:`try_family` says how far a family gets, in one line.

The start of a VLM family sweep: a family that builds here still needs a tokenizer, a chat
template and its processor's files to become a zoo entry (``families_media``).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any

from harness.core.exception_line import exception_line
from harness.models.zoo.tiny_sizes import DENSE, EXPERTS, POSITIONS, VOCAB

TEXT_SIZES: Mapping[str, int] = MappingProxyType(
    {
        **DENSE,
        "vocab_size": VOCAB,
        **EXPERTS,
        "n_routed_experts": 4,
        "max_position_embeddings": POSITIONS,
    }
)
VISION_SIZES: Mapping[str, int] = MappingProxyType(
    {
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "depth": 2,
        "embed_dim": 32,
        "num_heads": 2,
        "head_dim": 16,
        "out_hidden_size": 64,
    }
)
MAX_PARAMS = 20_000_000  # more than this: a size field the shrinking does not know


class TrialStatus(str, Enum):
    BUILT = "built"  # instantiated tiny and ran a text forward pass
    NOT_SHRUNK = "not_shrunk"  # built, but too large: sizes under other names
    FAILED = "failed"  # the config or the model could not be made


@dataclass(frozen=True)
class FamilyTrial:
    model_type: str
    status: TrialStatus
    params: int = 0
    reason: str = ""  # one line when not built


def _defaults(cls: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
        else:
            out[f.name] = None  # required: left for the family's own checks to name
    return out


def shrink(values: Mapping[str, Any], sizes: Mapping[str, int]) -> dict[str, Any]:
    """``values`` with each integer field named in ``sizes`` (or required and unset) made tiny."""
    out = dict(values)
    for key, size in sizes.items():
        if key in out and (out[key] is None or (type(out[key]) is int)):
            out[key] = size
    return out


def tiny_config(model_type: str) -> dict[str, Any]:
    """A ``config.json`` for ``model_type`` from its module's config dataclasses, shrunk."""
    module = importlib.import_module(f"mlx_vlm.models.{model_type}")
    config: dict[str, Any] = {"model_type": model_type, "vocab_size": TEXT_SIZES["vocab_size"]}
    for attr, key, sizes in (
        ("TextConfig", "text_config", TEXT_SIZES),
        ("VisionConfig", "vision_config", VISION_SIZES),
    ):
        cls = getattr(module, attr, None)
        if cls is not None and dataclasses.is_dataclass(cls):
            config[key] = shrink(_defaults(cls), sizes)
    return config


def try_family(model_type: str, *, seed: int = 0) -> FamilyTrial:
    """Derive, build and run a text forward pass of a tiny ``model_type`` (imports mlx-vlm)."""
    import mlx.core as mx
    from mlx.utils import tree_flatten

    try:
        model = instantiate(tiny_config(model_type), seed=seed)
        leaves: Any = tree_flatten(model.parameters())  # a list of (name, array) pairs
        params = sum(int(array.size) for _name, array in leaves)
        if params > MAX_PARAMS:
            return FamilyTrial(
                model_type, TrialStatus.NOT_SHRUNK, params, f"{params} parameters after shrinking"
            )
        out = model.language_model(mx.array([[1, 2, 3, 4]]))
        mx.eval(getattr(out, "logits", out))
    except Exception as exc:  # a family's own error, reported as its row
        return FamilyTrial(model_type, TrialStatus.FAILED, 0, exception_line(exc, 160))
    return FamilyTrial(model_type, TrialStatus.BUILT, params)


def instantiate(config: dict[str, Any], *, seed: int) -> Any:
    """Build the model the way ``mlx_vlm.utils.load_model`` does, from a copy of ``config``."""
    from mlx_vlm.utils import get_model_and_args, update_module_configs

    cfg = dict(config)
    model_class, _ = get_model_and_args(cfg)
    cfg.setdefault("text_config", {})
    cfg.setdefault("vision_config", {})
    cfg.setdefault("audio_config", {})
    model_config = model_class.ModelConfig.from_dict(cfg)
    model_config = update_module_configs(
        model_config, model_class, cfg, ["text", "vision", "perceiver", "projector", "audio"]
    )
    from harness.models.zoo.common import seeded_init

    seeded_init(seed)
    return model_class.Model(model_config)
