"""vision_throughput: figures, the stub-model contract, and the llava ledger entry on real cases."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.backends.base import BackendError, ImagePrompt, LoadInfo
from harness.core.types import Status
from harness.runner.judge import judge
from harness.scenarios.base import ScenarioContext, Workload
from harness.scenarios.vision_images import pattern_image, pattern_images
from harness.scenarios.vision_throughput import (
    IMAGE_TOKENS,
    SCENARIO,
    VisionThroughputParams,
    figures,
)

SUITES = Path(__file__).resolve().parents[2] / "suites"
NAN = float("nan")


@pytest.mark.parametrize(
    ("pre", "stamps", "expected"),
    [
        (0.5, [1.0, 1.5, 2.0], (0.5, 1.0, 2.0, 2.5)),
        (0.0, [0.2, 0.4], (0.0, 0.2, 5.0, 0.4)),
        (0.1, [0.3], (0.1, 0.3, NAN, 0.4)),
        (0.1, [], (0.1, NAN, NAN, NAN)),
    ],
)
def test_figures(pre: float, stamps: list[float], expected: tuple[float, ...]) -> None:
    got = figures(pre, stamps)
    for g, e in zip(got, expected, strict=True):
        assert (math.isnan(g) and math.isnan(e)) or g == pytest.approx(e)


@pytest.mark.parametrize(
    ("params", "prompt_tokens"),
    [({"images": 1, "image_px": 224}, 64 + 81), ({"images": 2, "image_px": 448}, 64 + 2 * 289)],
)
def test_workload_bounds_image_tokens(params: dict[str, int], prompt_tokens: int) -> None:
    p = VisionThroughputParams(**params, gen_tokens=8)
    assert SCENARIO.workload(p) == Workload(prompt_tokens, 8)


@pytest.mark.parametrize("bad", [{"images": 0}, {"image_px": 8}, {"colour": "red"}])
def test_params_reject(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        VisionThroughputParams(**bad)


def test_images_are_seeded_distinct_and_sized() -> None:
    a, b = pattern_images(2, 64)
    assert a.size == (64, 64) and a.mode == "RGB"
    assert a.tobytes() != b.tobytes()
    assert pattern_image(0, 64).tobytes() == a.tobytes()


class StubVision:
    """ImageInput in pure Python: 9 image tokens an image, or a processor that fails."""

    eos_token_ids = frozenset({0})

    def __init__(self, fail: str | None = None) -> None:
        self.fail = fail

    def encode(self, text: str) -> list[int]:
        return [1] * len(text)

    def decode(self, tokens: Sequence[int]) -> str:
        return "x" * len(tokens)

    def chat_tokens(self, messages: Any, *, tools: Any = None) -> list[int]:
        return [1, 2]

    def stream_tokens(self, prompt: Sequence[int], *, max_tokens: int, **_: Any) -> Iterator[int]:
        yield from range(1, max_tokens + 1)

    def vocab_size(self) -> int:
        return 10

    def prepare_images(self, text: str, images: Sequence[Any]) -> ImagePrompt:
        if self.fail:
            raise BackendError(self.fail)
        return ImagePrompt(len(text) + 9 * len(images), 9 * len(images), len(images), 0.001)

    def stream_image_prompt(
        self, prompt: ImagePrompt, *, max_tokens: int, **_: Any
    ) -> Iterator[int]:
        yield from range(1, max_tokens + 1)


def _ctx(model: object) -> ScenarioContext:
    return ScenarioContext(
        model, LoadInfo(0.1, 1, "cpu"), 3, 1, lambda: (model, LoadInfo(0, 0, ""))
    )


def test_run_records_each_figure_and_image_tokens() -> None:
    out = SCENARIO.run(_ctx(StubVision()), VisionThroughputParams(images=2, gen_tokens=4))
    assert not out.failures and out.skip_reason is None
    by_name = {m.name: m for m in out.metrics}
    assert {m.name for m in out.metrics} == {s.name for s in SCENARIO.metrics}
    assert by_name[IMAGE_TOKENS.name].samples == (18.0,)
    assert len(by_name["vision_throughput.ttft_s"].samples) == 3
    assert len(by_name["vision_throughput.ttft_s"].warmup_samples) == 1
    assert out.artifacts["image_tokens"] == 18


def test_a_processor_failure_fails_the_case_with_its_line() -> None:
    out = SCENARIO.run(
        _ctx(StubVision(fail="mlx-vlm image preprocessing failed: boom")), SCENARIO.params_model()
    )
    assert out.failures == ("mlx-vlm image preprocessing failed: boom",)
    assert out.metrics == ()


def test_a_text_only_model_is_skipped_naming_the_capability() -> None:
    class TextOnly:
        pass

    out = SCENARIO.run(_ctx(TextOnly()), SCENARIO.params_model())
    assert out.skip_reason is not None and "image input" in out.skip_reason


class DropPadding:
    """The upstream fix, planted: the image processor no longer receives text-only kwargs."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __call__(self, images: Any, **kwargs: Any) -> Any:
        kwargs.pop("padding", None)
        kwargs.pop("padding_side", None)
        return self.inner(images, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_llava_ledger_entry_xfails_for_its_reason_and_would_xpass_if_fixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.backends.mlx_vlm import BACKEND
    from harness.models.zoo.build import build
    from harness.models.zoo.families import FAMILIES
    from harness.spec.loader import load_suite
    from harness.spec.plan import plan

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path))
    for family in ("qwen2_vl", "llava"):
        build(FAMILIES[family], tmp_path / "models" / "zoo" / family)
    cases = plan(load_suite(SUITES / "vision.suite.yaml"))
    vision = [c for c in cases if c.scenario == "vision_throughput"]
    images = [c for c in cases if c.scenario.startswith("vision_")]  # every turn with an image
    expected = {c.model.key for c in images if c.expectation is not None}
    assert expected == {"zoo-llava"}  # qwen2-vl generates with images; llava's text cases pass
    assert all(c.expectation is not None for c in images if c.model.key == "zoo-llava")
    assert all(c.expectation is None for c in cases if not c.scenario.startswith("vision_"))
    case = next(c for c in vision if c.model.key == "zoo-llava")
    assert case.expectation is not None and case.expectation.strict
    assert case.expectation.source.endswith("known_broken.yaml:9")

    model, info = BACKEND.load(tmp_path / "models" / "zoo" / "llava")
    params = VisionThroughputParams.model_validate(dict(case.params))
    ctx = ScenarioContext(model, info, 1, 0, lambda: (model, info))
    broken = SCENARIO.run(ctx, params)
    assert len(broken.failures) == 1
    status, _gates, reason = judge(case, Status.FAILED, (), broken.failures[0], {})
    assert status is Status.XFAILED and reason is not None
    assert "got an unexpected keyword argument 'padding'" in broken.failures[0]
    assert case.expectation.reason in reason

    model.processor.image_processor = DropPadding(model.processor.image_processor)
    fixed = SCENARIO.run(ctx, params)
    assert not fixed.failures and fixed.metrics
    status, _gates, reason = judge(case, Status.PASSED, fixed.metrics, None, {})
    assert status is Status.XPASSED
    assert reason is not None and "remove entry" in reason and "known_broken.yaml:9" in reason
