"""Write a vision family as an mlx-vlm model directory (mlx-vlm's own model classes).

A generated family (``derive_vision_family``) is completed here, at build time: its config is
derived from the installed mlx-vlm's config classes.

Weights are saved in mlx-vlm's layout (``vision_tower.*``, ``language_model.*``), the layout
``mlx_vlm.convert`` writes; the template goes to ``chat_template.json`` as real Qwen2-VL ships it.
"""

from __future__ import annotations

from pathlib import Path

from harness.models.zoo.common import (
    check_float32,
    model_config,
    write_extra_files,
    write_json,
    write_tokenizer,
)
from harness.models.zoo.derive_vision import instantiate
from harness.models.zoo.family import Family


def write_vision_model(family: Family, out_dir: Path, *, seed: int) -> int:
    """Write tokenizer, processor files, config and seeded float32 weights; return param count."""
    from mlx_vlm.utils import save_weights

    from harness.models.zoo.derive_vision_family import IMAGE_TOKEN, complete, is_generated

    extra: dict[str, object] = {}
    if is_generated(family):
        family = complete(family)
        extra = {"image_token": IMAGE_TOKEN}
    vocab = write_tokenizer(family, out_dir, tokenizer_extra=extra)
    config = model_config(family, vocab)
    model = instantiate(config, seed=seed)
    n_params = check_float32(model)
    save_weights(out_dir, model)
    write_json(out_dir / "config.json", config)
    if family.chat_template is not None:
        write_json(out_dir / "chat_template.json", {"chat_template": family.chat_template})
    write_extra_files(family, out_dir)
    return n_params
