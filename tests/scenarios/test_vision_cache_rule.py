"""The image rule of a single-slot prefix cache, and a planted stale reuse it catches on a real
tiny Qwen2-VL (mlx-vlm's own token-keyed PromptCacheState kept across a changed image)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.scenarios.vision_cache_rule import (
    CacheSlot,
    ReuseVerdict,
    decide,
    image_digest,
    image_spans,
)
from harness.scenarios.vision_images import pattern_images

IMG = 9  # the image placeholder id in these tables
A, B = "a" * 64, "b" * 64
TURN1 = (1, 2, IMG, IMG, IMG, 3, 4)  # text, an image, text
TURN2 = (*TURN1, 5, 6, 7)  # a text follow-up on the same image


@pytest.mark.parametrize(
    ("slot", "tokens", "digests", "verdict", "prefix"),
    [
        (None, TURN1, (A,), ReuseVerdict.EMPTY, 0),
        (CacheSlot((8, 8), ()), TURN1, (A,), ReuseVerdict.EMPTY, 0),
        (CacheSlot(TURN1, (A,)), TURN2, (A,), ReuseVerdict.REUSE, len(TURN1)),
        (CacheSlot(TURN1, (A,)), TURN1, (A,), ReuseVerdict.REUSE, len(TURN1) - 1),  # exact repeat
        (CacheSlot(TURN1, (A,)), TURN2, (B,), ReuseVerdict.IMAGE_CHANGED, 0),  # the stale reuse
        (CacheSlot(TURN1, ()), TURN2, (A,), ReuseVerdict.IMAGE_CHANGED, 0),  # digest unknown
        (CacheSlot(TURN1, (A,)), (*TURN1, IMG, IMG, 5), (A, B), ReuseVerdict.IMAGE_IN_SUFFIX, 0),
        (CacheSlot((1, 2, IMG), (A,)), TURN1, (A,), ReuseVerdict.IMAGE_IN_SUFFIX, 0),  # split
        (CacheSlot((1, 2, 3), ()), (1, 2, 4, 5), (), ReuseVerdict.REUSE, 2),  # text only
    ],
)
def test_decide(
    slot: CacheSlot | None,
    tokens: tuple[int, ...],
    digests: tuple[str, ...],
    verdict: ReuseVerdict,
    prefix: int,
) -> None:
    decision = decide(slot, tokens, digests, {IMG})
    assert (decision.verdict, decision.prefix_tokens) == (verdict, prefix)
    assert "\n" not in decision.reason


@pytest.mark.parametrize(
    ("tokens", "spans"),
    [((), []), ((1, IMG, IMG, 2, IMG), [(1, 3), (4, 5)]), ((IMG,), [(0, 1)])],
)
def test_image_spans(tokens: tuple[int, ...], spans: list[tuple[int, int]]) -> None:
    assert image_spans(tokens, {IMG}) == spans


def test_digest_tells_images_of_one_size_apart() -> None:
    x, y = pattern_images(2, 64)
    assert image_digest(x) != image_digest(y)
    assert image_digest(x) == image_digest(pattern_images(1, 64)[0])


@pytest.fixture(scope="module")
def qwen(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from harness.backends.mlx_vlm import BACKEND
    from harness.models.zoo.build import build
    from harness.models.zoo.families import FAMILIES

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        path = build(FAMILIES["qwen2_vl"], tmp_path_factory.mktemp("zoo") / "qwen2_vl")
        return BACKEND.load(Path(path))[0]


def test_rule_catches_a_planted_stale_reuse(qwen: Any) -> None:
    """Turn 1 with image X fills mlx-vlm's single-slot cache; turn 2 swaps in image Y of the
    same size. Token ids are identical, so the token-keyed slot reuses X's keys and values:
    the warm answer is the cold answer about X. The rule refuses that reuse, and allows the
    one where the image did not change (where warm equals cold)."""
    import mlx.core as mx
    from mlx_vlm import stream_generate
    from mlx_vlm.generate.common import PromptCacheState
    from mlx_vlm.prompt_utils import apply_chat_template

    x, y = pattern_images(2, 224)
    turn1 = str(apply_chat_template(qwen.processor, qwen.model.config, "Describe.", num_images=1))
    turn2 = turn1 + "A picture.<|im_end|>\n<|im_start|>user\nAnd the colours?<|im_end|>\n"
    turn2 += "<|im_start|>assistant\n"

    def first(text: str, image: Any, state: PromptCacheState | None = None) -> Any:
        qwen._reset_rope_state()
        results = stream_generate(
            qwen.model,
            qwen.processor,
            text,
            image=[image],
            max_tokens=2,
            temperature=0.0,
            prompt_cache_state=state,
        )
        head, *_rest = results  # run to the end: the slot is filled after the last token
        return head

    def gap(a: Any, b: Any) -> float:
        return float(mx.abs(a.logprobs - b.logprobs).max())

    cold_x, cold_y = first(turn2, x), first(turn2, y)
    assert gap(cold_x, cold_y) > 1e-3  # this model's output depends on the image

    stale_slot = PromptCacheState()
    first(turn1, x, stale_slot)
    slot = CacheSlot(tuple(stale_slot.token_ids or ()), (image_digest(x),))
    stale = first(turn2, y, stale_slot)  # the planted stale reuse
    assert stale.cached_tokens > 0, "mlx-vlm no longer reuses across a changed image (fixed?)"
    caught = gap(stale, cold_y) > 1e-3  # warm output is not the cold output for image Y
    assert caught and gap(stale, cold_x) < 1e-5  # it answered about the old image

    image_token = qwen.model.config.image_token_id
    from mlx_vlm.utils import prepare_inputs

    tokens = qwen.prepare_images("Describe.", [y]).inputs["input_ids"].flatten().tolist()
    tokens2 = prepare_inputs(qwen.processor, images=[y], prompts=turn2)["input_ids"]
    tokens2 = tokens2.flatten().tolist()
    assert tokens2[: len(tokens)] == tokens and image_token in tokens
    refused = decide(slot, tokens2, (image_digest(y),), {image_token})
    assert refused.verdict is ReuseVerdict.IMAGE_CHANGED

    allowed = decide(slot, tokens2, (image_digest(x),), {image_token})
    assert allowed.verdict is ReuseVerdict.REUSE and allowed.prefix_tokens >= len(tokens)
    fresh_slot = PromptCacheState()
    first(turn1, x, fresh_slot)
    assert gap(first(turn2, x, fresh_slot), cold_x) < 1e-5  # a legitimate hit equals cold
