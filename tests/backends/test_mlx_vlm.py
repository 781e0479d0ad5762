"""The mlx-vlm adapter on tiny random VLMs generated in the test run (no downloads)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.backends.base import (
    BackendCapability,
    BackendError,
    ImageInput,
    LoadedModel,
    check_delivered,
)
from harness.backends.chat_templating import ChatTemplating
from harness.backends.image_slot import ImageSlotCaching
from harness.backends.mlx_vlm import BACKEND, MlxVlmModel
from harness.scenarios.vision_images import pattern_images


@pytest.fixture(scope="module", autouse=True)
def offline() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield


@pytest.fixture(scope="module")
def zoo_vlm(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """zoo/qwen2_vl and zoo/llava in the cache layout (``models/zoo/<family>``)."""
    from harness.models.zoo.build import build
    from harness.models.zoo.families import FAMILIES

    root = tmp_path_factory.mktemp("cache")
    return {
        name: build(FAMILIES[name], root / "models" / "zoo" / name)
        for name in ("qwen2_vl", "llava")
    }


@pytest.fixture(scope="module")
def qwen(zoo_vlm: dict[str, Path]) -> MlxVlmModel:
    return BACKEND.load(zoo_vlm["qwen2_vl"])[0]


@pytest.fixture(scope="module")
def llava(zoo_vlm: dict[str, Path]) -> MlxVlmModel:
    return BACKEND.load(zoo_vlm["llava"])[0]


def test_load_delivers_what_it_declares(zoo_vlm: dict[str, Path]) -> None:
    model, info = BACKEND.load(zoo_vlm["qwen2_vl"])
    assert BACKEND.capabilities == {
        BackendCapability.TEXT_GENERATION,
        BackendCapability.IMAGES,
        BackendCapability.PROMPT_CACHE,
        BackendCapability.TOOL_PARSING,
    }
    check_delivered("mlx_vlm", BACKEND.capabilities, model)  # raises on a missing member
    assert isinstance(model, LoadedModel) and isinstance(model, ImageInput)
    assert isinstance(model, ImageSlotCaching) and isinstance(model, ChatTemplating)
    assert info.load_s > 0 and info.weights_bytes > 0
    assert info.details["mlx_active_bytes"] > 0


def test_text_tokens_are_greedy_and_match_mlx_vlm(qwen: MlxVlmModel) -> None:
    from mlx_vlm import stream_generate

    prompt = qwen.chat_tokens([{"role": "user", "content": "Say something."}])
    assert "<|im_start|>assistant" in qwen.decode(prompt)
    ours = list(qwen.stream_tokens(prompt, max_tokens=8))
    assert len(ours) == 8 and ours == list(qwen.stream_tokens(prompt, max_tokens=8))
    text = qwen.decode(prompt)
    theirs = [
        r.token
        for r in stream_generate(qwen.model, qwen.processor, text, max_tokens=8, temperature=0.0)
    ]
    assert theirs[: len(ours)] == ours  # its last result repeats the final token


@pytest.mark.parametrize(
    ("images", "px", "image_tokens"),
    [(0, 224, 0), (1, 224, 16), (2, 224, 32), (1, 448, 16)],  # max_pixels caps at 112 x 112
)
def test_image_prompt_counts_image_tokens(
    qwen: MlxVlmModel, images: int, px: int, image_tokens: int
) -> None:
    prompt = qwen.prepare_images("Describe the image.", pattern_images(images, px))
    assert (prompt.images, prompt.image_tokens) == (images, image_tokens)
    assert prompt.prompt_tokens > image_tokens and prompt.preprocess_s > 0
    tokens = list(qwen.stream_image_prompt(prompt, max_tokens=4))
    assert len(tokens) == 4


def test_image_changes_what_the_model_computes(qwen: MlxVlmModel) -> None:
    """Different pixels reach the language model (a stale image would go unnoticed otherwise)."""
    import mlx.core as mx

    def logits(index: int) -> Any:
        prompt = qwen.prepare_images("Describe.", pattern_images(1, 224, first=index))
        inputs = dict(prompt.inputs)
        qwen._reset_rope_state()
        extra = {k: v for k, v in inputs.items() if k not in ("input_ids", "pixel_values")}
        extra.pop("attention_mask", None)
        embedded = qwen.model.get_input_embeddings(
            inputs["input_ids"], inputs["pixel_values"], mask=inputs["attention_mask"], **extra
        )
        return embedded.inputs_embeds

    first, second = logits(0), logits(1)
    assert first.shape == second.shape
    assert float(mx.abs(first - second).max()) > 1e-4


def test_llava_image_failure_is_one_line(llava: MlxVlmModel) -> None:
    assert list(llava.stream_tokens(llava.encode("hello"), max_tokens=3))  # text works
    with pytest.raises(BackendError) as err:
        llava.prepare_images("Describe.", pattern_images(1, 224))
    message = str(err.value)
    assert "\n" not in message and message.startswith("mlx-vlm image preprocessing failed")
    assert "got an unexpected keyword argument 'padding'" in message


def test_load_error_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "qwen2_vl"}')
    with pytest.raises(BackendError) as err:
        BACKEND.load(tmp_path)
    assert str(err.value).startswith("mlx_vlm.load failed:") and "\n" not in str(err.value)
