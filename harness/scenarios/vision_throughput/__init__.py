"""``vision_throughput``: one user turn with ``images`` generated images of ``image_px`` pixels a
side, through the backend's chat template and image processor, then ``gen_tokens`` generated
tokens (EOS ignored).

Per run:
- preprocessing = the processor's time (resize, patch, tokenize), before the generation call;
- time to first token (TTFT) = from the generation call to the first token: the vision encoder
  and the text prefill (mlx-vlm runs both in its first step, so they are not told apart);
- decode tokens/s = (generated - 1) / (last token - first token), as ``throughput`` defines it;
- image tokens = placeholder tokens the images became in the prompt (a count per case).

A text-only turn is ``throughput`` on the same backend: a known-broken entry matches by
scenario, so failures that need an image stay apart from text generation.
"""

from __future__ import annotations

import time
from typing import ClassVar

from pydantic import Field

from harness.backends.base import BackendCapability, BackendError, ImageInput, ImagePrompt
from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.probe.types import Capability
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
    metric,
)
from harness.scenarios.vision_images import pattern_images

PREPROCESS = MetricSpec(
    "vision_throughput.preprocess_s", Unit.SECONDS, False, "image processor time", noise_floor=0.05
)
TTFT = MetricSpec(
    "vision_throughput.ttft_s",
    Unit.SECONDS,
    False,
    "vision encoder + prefill to first token",
    noise_floor=0.05,
)
DECODE = MetricSpec("vision_throughput.decode_tps", Unit.TOKENS_PER_SECOND, True, "tokens/s")
E2E = MetricSpec("vision_throughput.e2e_s", Unit.SECONDS, False, "preprocess to last token")
IMAGE_TOKENS = MetricSpec(
    "vision_throughput.image_tokens", Unit.TOKENS, False, "prompt tokens the images became"
)
PROMPT_TOKENS = MetricSpec(
    "vision_throughput.prompt_tokens", Unit.TOKENS, False, "prompt tokens, images included"
)
TIMED = (PREPROCESS, TTFT, DECODE, E2E)

PROMPT_TEXT = "Describe the image in one sentence."


class VisionThroughputParams(Params):
    images: int = Field(1, ge=1, le=8, description="images in the turn (text only: throughput)")
    image_px: int = Field(224, ge=28, le=2048, description="side of each square image, pixels")
    gen_tokens: int = Field(16, ge=2, description="tokens to generate (EOS ignored)")


def timed_image_run(model: ImageInput, prompt: ImagePrompt, gen_tokens: int) -> list[float]:
    """One generation; the time (s) of each token since the generation call."""
    start = time.perf_counter()
    stamps: list[float] = []
    for _token in model.stream_image_prompt(prompt, max_tokens=gen_tokens, ignore_eos=True):
        stamps.append(time.perf_counter() - start)
    return stamps


def figures(preprocess_s: float, stamps: list[float]) -> tuple[float, float, float, float]:
    """(preprocess, TTFT, decode tok/s, end to end) of one run; NaN where undefined."""
    nan = float("nan")
    if not stamps:
        return (preprocess_s, nan, nan, nan)
    decode = (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else nan
    return (preprocess_s, stamps[0], decode, preprocess_s + stamps[-1])


class VisionThroughputScenario(BaseScenario[VisionThroughputParams]):
    name: ClassVar[str] = "vision_throughput"
    version: ClassVar[int] = 1
    params_model = VisionThroughputParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (*TIMED, IMAGE_TOKENS, PROMPT_TOKENS)
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.VISION})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset({BackendCapability.IMAGES})

    def workload(self, params: VisionThroughputParams) -> Workload:
        # an upper bound: one token per 28 x 28 pixels (14-pixel patches merged 2 x 2)
        per_image = (params.image_px // 28 + 1) ** 2
        return Workload(64 + params.images * per_image, params.gen_tokens)

    def run(self, ctx: ScenarioContext, params: VisionThroughputParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, ImageInput):
            return lacks(ctx, BackendCapability.IMAGES)
        images = pattern_images(params.images, params.image_px)
        runs: list[tuple[float, ...]] = []
        prompt: ImagePrompt | None = None
        try:
            for _ in range(ctx.warmup + ctx.repeats):
                prompt = model.prepare_images(PROMPT_TEXT, images)
                stamps = timed_image_run(model, prompt, params.gen_tokens)
                runs.append(figures(prompt.preprocess_s, stamps))
        except BackendError as exc:
            return ScenarioOutput((), {"images": params.images}, failures=(str(exc),))
        warm, measured = runs[: ctx.warmup], runs[ctx.warmup :]
        metrics = [
            metric(spec, [r[i] for r in measured], [r[i] for r in warm])
            for i, spec in enumerate(TIMED)
        ]
        if prompt is not None:
            metrics.append(metric(IMAGE_TOKENS, [float(prompt.image_tokens)]))
            metrics.append(metric(PROMPT_TOKENS, [float(prompt.prompt_tokens)]))
        return ScenarioOutput(
            tuple(metrics),
            {
                "images": params.images,
                "image_px": params.image_px,
                "image_tokens": prompt.image_tokens if prompt else None,
                "prompt_tokens": prompt.prompt_tokens if prompt else None,
            },
        )


SCENARIO = VisionThroughputScenario()
