"""Write a vision family as an mlx-vlm model directory (mlx-vlm's own model classes).

Weights are saved in mlx-vlm's layout (``vision_tower.*``, ``language_model.*``), the layout
``mlx_vlm.convert`` writes; the template goes to ``chat_template.json`` as real Qwen2-VL ships it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.models.zoo.common import (
    check_float32,
    model_config,
    seeded_init,
    write_extra_files,
    write_json,
    write_tokenizer,
)
from harness.models.zoo.family import Family


def write_vision_model(family: Family, out_dir: Path, *, seed: int) -> int:
    """Write tokenizer, processor files, config and seeded float32 weights; return param count."""
    from mlx_vlm.utils import save_weights

    vocab = write_tokenizer(family, out_dir)
    config = model_config(family, vocab)
    model = instantiate(config, seed=seed)
    n_params = check_float32(model)
    save_weights(out_dir, model)
    write_json(out_dir / "config.json", config)
    if family.chat_template is not None:
        write_json(out_dir / "chat_template.json", {"chat_template": family.chat_template})
    write_extra_files(family, out_dir)
    return n_params


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
    seeded_init(seed)
    return model_class.Model(model_config)
