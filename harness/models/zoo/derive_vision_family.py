"""Zoo families generated from mlx-vlm's own config classes (not written per family).

:data:`GENERATED_VISION` names the mlx-vlm model types whose tiny configuration
(:func:`~harness.models.zoo.derive_vision.tiny_config`) builds and runs; each becomes a
``zoo/<model_type>`` entry whose :class:`Family` is only a recipe (no mlx import to list it).
:func:`complete` turns the recipe into the full family at build time: the derived config, a
tokenizer carrying the image placeholder tokens processors look for, a ChatML template that
renders the family's image token, and a ``preprocessor_config.json`` sized from the derived
vision config so the processor that ``AutoProcessor`` (or mlx-vlm's patch of it) picks for the
model type resizes images to what the tiny vision tower takes.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from importlib import metadata
from typing import Any

from harness.models.zoo.family import VOCAB_SIZE, Family, frozen

DERIVATION_VERSION = 1  # bump when the generated files change meaning (the zoo rebuilds)

# mlx-vlm 0.7.10 model types whose derived tiny config builds and runs a text forward pass
# (``mlx-harness models vision-matrix``; tests/models/test_vision_families.py keeps this honest).
# qwen2_vl and llava are hand-made families (families_media) and are not generated again.
GENERATED_VISION: tuple[str, ...] = (
    "cohere_compass",
    "dots_ocr",
    "glm_ocr",
    "granite_vision",
    "jina_vlm",
    "llava_onevision",
    "llmjpvl",
    "locateanything",
    "minimax_m3_vl",
    "mistral_large3",
    "mllama",
    "moondream2",
    "paligemma",
    "phi4_siglip",
    "pixtral",
    "plamo2vl",
    "smolvlm",
)

IMAGE_TOKEN = "<image>"
# Placeholder and wrapper tokens the processors of the families look up in the tokenizer.
MEDIA_TOKENS: tuple[str, ...] = (
    IMAGE_TOKEN,
    "<|image_pad|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image|>",
    "<fake_token_around_image>",
    "<global-img>",
    "<end_of_utterance>",
    "[IMG]",
    "[IMG_BREAK]",
    "[IMG_END]",
    "<start_of_image>",
    "<end_of_image>",
    "<image_soft_token>",
    "<pad>",
)
CHAT_TOKENS: tuple[str, ...] = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")

# OpenAI CLIP normalisation; the tiny towers are random, so any fixed statistics do.
_MEAN = (0.48145466, 0.4578275, 0.40821073)
_STD = (0.26862954, 0.26130258, 0.27577711)
DEFAULT_IMAGE_PX = 28


def chat_template(image_token: str) -> str:
    """ChatML whose message parts render an image as ``image_token`` (no tools)."""
    return (
        "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
        "{% if message['content'] is string %}{{ message['content'] }}"
        "{% else %}{% for part in message['content'] %}"
        "{% if part['type'] == 'image' or 'image' in part or 'image_url' in part %}"
        + image_token
        + "{% elif 'text' in part %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}"
        "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )


def mlx_vlm_version() -> str:
    try:
        return metadata.version("mlx-vlm")
    except metadata.PackageNotFoundError:
        return "not installed"


def recipe(model_type: str) -> Family:
    """The zoo entry of a generated family, before derivation (no mlx-vlm import)."""
    return Family(
        name=model_type,
        backend="mlx_vlm",
        config=frozen(
            {
                "model_type": model_type,
                "vocab_size": VOCAB_SIZE,
                "derived_from": f"mlx-vlm {mlx_vlm_version()}",
                "derivation_version": DERIVATION_VERSION,
            }
        ),
        chat_template=chat_template(IMAGE_TOKEN),
        special_tokens=(),
        appended_special_tokens=(*CHAT_TOKENS, *MEDIA_TOKENS),
        bos_token=None,
        eos_token="<|im_end|>",
        tags=("vision", "chat", "tiny", "random", "derived"),
        notes=f"{model_type}: tiny config derived from mlx-vlm's config classes, random weights.",
    )


def is_generated(family: Family) -> bool:
    return "derived_from" in family.config


def vision_model_types() -> list[str]:
    """Every model package of the installed mlx-vlm (imports only the package's ``__init__``)."""
    import mlx_vlm.models as models

    return sorted(m.name for m in pkgutil.iter_modules(models.__path__) if m.ispkg)


def _image_size(vision: dict[str, Any]) -> int:
    for key in ("image_size", "img_size", "crop_size"):
        value = vision.get(key)
        if isinstance(value, int) and value > 0:
            return min(value, 448)
        if isinstance(value, (list, tuple)) and value and isinstance(value[0], int):
            return min(int(value[0]), 448)
    return DEFAULT_IMAGE_PX


def preprocessor_config(config: dict[str, Any]) -> dict[str, Any]:
    """Image processor settings sized to the derived vision tower (no processor type: the
    model type picks it, as for a checkpoint whose file names none)."""
    vision = dict(config.get("vision_config") or {})
    px = _image_size(vision)
    given = vision.get("patch_size")
    patch = given if isinstance(given, int) and given > 0 else 14
    return {
        "do_resize": True,
        "do_rescale": True,
        "do_normalize": True,
        "do_convert_rgb": True,
        "do_image_splitting": False,
        "size": {"height": px, "width": px},
        "crop_size": {"height": px, "width": px},
        "image_mean": _MEAN,
        "image_std": _STD,
        "rescale_factor": 1 / 255,
        "resample": 3,
        "patch_size": patch,
        "image_seq_length": (px // patch) ** 2,
        "min_pixels": px * px,
        "max_pixels": px * px,
        "merge_size": vision.get("spatial_merge_size", 2),
        "temporal_patch_size": vision.get("temporal_patch_size", 2),
    }


def _config_fields(model_type: str) -> set[str]:
    module = importlib.import_module(f"mlx_vlm.models.{model_type}")
    cls = getattr(module, "ModelConfig", None)
    if cls is None or not dataclasses.is_dataclass(cls):
        return set()
    return {f.name for f in dataclasses.fields(cls)}


def complete(family: Family) -> Family:
    """The full family of a generated recipe: derived config, token ids and processor files."""
    from harness.models.zoo.derive_vision import tiny_config

    config = tiny_config(family.model_type)
    config["vocab_size"] = VOCAB_SIZE
    fields = _config_fields(family.model_type)
    token_ids: dict[str, str] = {"eos_token_id": "<|im_end|>", "pad_token_id": "<pad>"}
    for key in ("image_token_index", "image_token_id"):
        if key in fields or key == "image_token_index":
            token_ids[key] = IMAGE_TOKEN
    files = {
        "preprocessor_config.json": {
            k: v for k, v in preprocessor_config(config).items() if v is not None
        },
        "processor_config.json": {
            "image_token": IMAGE_TOKEN,
            "image_seq_length": preprocessor_config(config)["image_seq_length"],
        },
    }
    return dataclasses.replace(
        family,
        config=frozen(config),
        token_ids=frozen(token_ids),
        files=frozen(files),
    )


def generated_families() -> dict[str, Family]:
    """The generated zoo entries, by name (``zoo/<name>``), in :data:`GENERATED_VISION` order."""
    return {name: recipe(name) for name in GENERATED_VISION}
