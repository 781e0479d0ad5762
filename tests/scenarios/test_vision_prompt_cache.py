"""vision_prompt_cache on a real tiny Qwen2-VL (whose output depends on the image): the slot is
reused on a text follow-up and equals cold, refused on a changed image, an image in the suffix
and a wrapped rotating window, and a planted stale reuse is caught."""

from __future__ import annotations

from typing import Any

import pytest

from harness.scenarios.base import ScenarioContext
from harness.scenarios.vision_prompt_cache import SCENARIO, turns


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> ScenarioContext:
    from harness.backends.mlx_vlm import BACKEND
    from tests.zoo_shared import zoo_family

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        path = zoo_family(tmp_path_factory, "qwen2_vl")
        model, info = BACKEND.load(path)
    return ScenarioContext(model, info, 1, 0, lambda: BACKEND.load(path), "mlx_vlm")


def _values(out: Any) -> dict[str, float]:
    return {m.name.split(".")[-1]: m.samples[-1] for m in out.metrics if m.samples}


@pytest.mark.parametrize(
    ("params", "verdict", "reused"),
    [
        ({"shape": "follow_up"}, "reuse", True),
        ({"shape": "new_image"}, "image_in_suffix", False),
        ({"shape": "changed_image"}, "image_changed", False),
        ({"shape": "follow_up", "max_kv_size": 32}, "untrimmable", False),
    ],
)
def test_slot_reuse_follows_the_rule_and_equals_cold(
    ctx: ScenarioContext, params: dict[str, Any], verdict: str, reused: bool
) -> None:
    out = SCENARIO.run(ctx, SCENARIO.params_model(**params))
    values = _values(out)
    assert out.failures == () and out.skip_reason is None
    assert out.artifacts["verdict"] == verdict and "\n" not in out.artifacts["reason"]
    assert (values["tokens_reused"] > 0) is reused
    assert values["refused"] == (0.0 if reused else 1.0)
    if params.get("max_kv_size"):
        assert "RotatingKVCache" in out.artifacts["reason"]


def test_a_planted_stale_reuse_is_caught(ctx: ScenarioContext) -> None:
    params = SCENARIO.params_model(shape="changed_image", self_check="stale_reuse")
    out = SCENARIO.run(ctx, params)
    assert out.artifacts["image_sensitivity"] > params.logprob_tolerance
    assert _values(out)["tokens_reused"] > 0  # mlx-vlm's token-keyed slot reused image X
    assert len(out.failures) == 1 and "differ from cold" in out.failures[0]


def test_turn_two_holds_the_images_where_the_shape_says() -> None:
    for shape, count in (("follow_up", 1), ("new_image", 2), ("changed_image", 1)):
        _first, first_images, second, second_images = turns(shape, 32)
        assert len(first_images) == 1 and len(second_images) == count
        parts = [p for m in second if isinstance(m["content"], list) for p in m["content"]]
        assert sum(p["type"] == "image" for p in parts) == count
    assert turns("changed_image", 32)[3][0].tobytes() != turns("follow_up", 32)[3][0].tobytes()
