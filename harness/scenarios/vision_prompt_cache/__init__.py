"""``vision_prompt_cache``: image prompt caching as a single-slot chat engine does it.

Turn 1 is a user message with image X (cold: it fills the slot). Turn 2 depends on ``shape``:

- ``follow_up``: a text follow-up on the same image; the slot should be reused;
- ``new_image``: the follow-up brings a second image (its placeholder lies past the cached
  prefix), so the slot must not be reused;
- ``changed_image``: turn 2 is the follow-up, but the first image is now Y of the same size:
  token ids are identical, only the pixels differ, so a token-keyed slot would reuse X's keys.

Before turn 2 the image rule (:mod:`harness.scenarios.vision_cache_rule`) decides whether the
slot may be offered; a refusal (an image changed or in the suffix, or a slot that would need
trimming but cannot be trimmed: a wrapped rotating window with ``max_kv_size``) empties the slot
and is recorded with its reason. Each repeat also runs turn 2 cold (no slot); the warm reply
must equal the cold one token for token, and its first-token log-probabilities must agree within
``logprob_tolerance`` (tiny random models answer with one repeated token, so tokens alone miss a
stale reuse). ``self_check: stale_reuse`` offers the slot against the rule's refusal, to prove
the check catches the stale reuse (only where the model's output depends on the image).

TTFT is from the generation call to the first token, the image processor included (the
engine preprocesses turn 2's images even when the slot holds them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.backends.base import BackendCapability
from harness.backends.image_slot import ImageSlotCaching, SlotReply
from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.probe.types import Capability
from harness.scenarios.base import (
    BaseScenario,
    Params,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    metric,
)
from harness.scenarios.parting import first_mismatch
from harness.scenarios.vision_cache_rule import CacheSlot, ReuseVerdict, decide, image_digest
from harness.scenarios.vision_images import pattern_images

COLD = MetricSpec(
    "vision_prompt_cache.ttft_cold_s", Unit.SECONDS, False, "turn 2 TTFT, no slot", noise_floor=0.05
)
WARM = MetricSpec(
    "vision_prompt_cache.ttft_warm_s",
    Unit.SECONDS,
    False,
    "turn 2 TTFT with the slot turn 1 left (or an emptied one when refused)",
    noise_floor=0.05,
)
REUSED = MetricSpec(
    "vision_prompt_cache.tokens_reused", Unit.TOKENS, True, "prompt tokens taken from the slot"
)
PROMPT = MetricSpec("vision_prompt_cache.prompt_tokens", Unit.TOKENS, False, "turn 2 prompt")
REFUSED = MetricSpec(
    "vision_prompt_cache.refused", Unit.RATIO, False, "1 when the rule refused the slot"
)
GAP = MetricSpec(
    "vision_prompt_cache.logprob_gap",
    Unit.RATIO,
    False,
    "max |warm - cold| first-token log-probability",
)

TURN1 = "Describe the image."
REPLY = "A picture of a pattern."
FOLLOW_UP = "And the colours?"
ANOTHER = "And this one?"


class VisionPromptCacheParams(Params):
    shape: Literal["follow_up", "new_image", "changed_image"] = Field(
        "follow_up",
        description="turn 2: a text follow-up on the same image, a second image, or the first "
        "image changed (same size)",
    )
    image_px: int = Field(224, ge=16, description="side of the generated images, pixels")
    gen_tokens: int = Field(8, ge=1, description="greedy tokens compared warm vs cold")
    max_kv_size: int | None = Field(None, ge=8, description="rotating KV window, tokens")
    logprob_tolerance: float = Field(1e-3, gt=0, description="first-token log-prob agreement")
    self_check: Literal["none", "stale_reuse"] = Field(
        "none",
        description="stale_reuse: offer the slot even where the rule refuses it, to prove the "
        "warm/cold check catches a stale image reuse",
    )


def _user(text: str, images: int) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "image"} for _ in range(images)]
    return {"role": "user", "content": [*parts, {"type": "text", "text": text}]}


def turns(shape: str, px: int) -> tuple[list[Any], list[Any], list[dict[str, Any]], list[Any]]:
    """(turn 1 messages, turn 1 images, turn 2 messages, turn 2 images)."""
    x, y = pattern_images(2, px)
    first = [_user(TURN1, 1)]
    second = [*first, {"role": "assistant", "content": REPLY}]
    if shape == "new_image":
        return first, [x], [*second, _user(ANOTHER, 1)], [x, y]
    return first, [x], [*second, _user(FOLLOW_UP, 0)], [y if shape == "changed_image" else x]


def logprob_gap(a: SlotReply, b: SlotReply) -> float:
    import numpy as np

    if a.first_logprobs is None or b.first_logprobs is None:
        return 0.0
    return float(np.max(np.abs(np.asarray(a.first_logprobs) - np.asarray(b.first_logprobs))))


class VisionPromptCacheScenario(BaseScenario[VisionPromptCacheParams]):
    name: ClassVar[str] = "vision_prompt_cache"
    version: ClassVar[int] = 1
    params_model = VisionPromptCacheParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (COLD, WARM, REUSED, PROMPT, REFUSED, GAP)
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.VISION})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.IMAGES, BackendCapability.PROMPT_CACHE}
    )

    def workload(self, params: VisionPromptCacheParams) -> Workload:
        return Workload(256 + 2 * (params.image_px // 14) ** 2, params.gen_tokens)

    def run(self, ctx: ScenarioContext, params: VisionPromptCacheParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, ImageSlotCaching):
            return ScenarioOutput(
                (),
                skip_reason=f"capability_missing: backend {ctx.backend} has no single-slot "
                "image prompt cache",
            )
        return _Runner(model, params).run(ctx.warmup, ctx.repeats)


class _Runner:
    def __init__(self, model: ImageSlotCaching, p: VisionPromptCacheParams) -> None:
        self.model = model
        self.p = p
        self.first, self.first_images, self.second, self.second_images = turns(p.shape, p.image_px)

    def _reply(self, slot: Any | None, messages: Sequence[Any], images: Sequence[Any]) -> SlotReply:
        return self.model.generate_in_slot(
            slot, messages, images, max_tokens=self.p.gen_tokens, max_kv_size=self.p.max_kv_size
        )

    def _decide(self, slot: Any) -> tuple[str, str]:
        """(verdict, reason) of the image rule, then of trimming."""
        tokens = self.model.chat_prompt_ids(self.second, self.second_images)
        held = CacheSlot(
            self.model.slot_tokens(slot), tuple(image_digest(i) for i in self.first_images)
        )
        digests = tuple(image_digest(i) for i in self.second_images)
        decision = decide(held, tokens, digests, self.model.image_token_ids())
        if decision.verdict is not ReuseVerdict.REUSE:
            return decision.verdict.value, decision.reason
        if decision.prefix_tokens < len(held.tokens):
            why = self.model.slot_untrimmable(slot)
            if why is not None:
                return "untrimmable", f"the slot must be cut back to the prefix: {why}"
        return decision.verdict.value, decision.reason

    def _sensitivity(self) -> float:
        """How far the cold turn 2 moves when its first image changes (0: blind to images)."""
        other = pattern_images(3, self.p.image_px)[2]
        swapped = [other, *self.second_images[1:]]
        return logprob_gap(
            self._reply(None, self.second, self.second_images),
            self._reply(None, self.second, swapped),
        )

    def run(self, warmup: int, repeats: int) -> ScenarioOutput:
        samples: dict[str, tuple[list[float], list[float]]] = {
            s.name: ([], []) for s in (COLD, WARM)
        }
        failures: list[str] = []
        verdict, reason = "", ""
        reused = prompt = 0
        gap = 0.0
        types: list[str] = []
        for index in range(warmup + repeats):
            at = 0 if index < warmup else 1
            cold = self._reply(None, self.second, self.second_images)
            slot = self.model.new_slot()
            self._reply(slot, self.first, self.first_images)
            types = self.model.slot_cache_types(slot)
            verdict, reason = self._decide(slot)
            if verdict != ReuseVerdict.REUSE.value and self.p.self_check == "none":
                slot = self.model.new_slot()  # the rule refused: the turn runs cold
            warm = self._reply(slot, self.second, self.second_images)
            samples[COLD.name][at].append(cold.ttft_s)
            samples[WARM.name][at].append(warm.ttft_s)
            reused, prompt, gap = warm.cached_tokens, warm.prompt_tokens, logprob_gap(warm, cold)
            if at == 1 and not failures:
                failures += self._compare(cold, warm, gap)
        artifacts: dict[str, Any] = {
            "shape": self.p.shape,
            "verdict": verdict,
            "reason": reason,
            "cache_types": types,
            "self_check": self.p.self_check,
            "equivalent": not failures,
        }
        metrics = [metric(s, samples[s.name][1], samples[s.name][0]) for s in (COLD, WARM)]
        metrics += [
            metric(REUSED, [float(reused)]),
            metric(PROMPT, [float(prompt)]),
            metric(REFUSED, [0.0 if verdict == ReuseVerdict.REUSE.value else 1.0]),
            metric(GAP, [gap]),
        ]
        if self.p.self_check == "stale_reuse":
            sensitivity = self._sensitivity()
            artifacts["image_sensitivity"] = sensitivity
            if sensitivity <= self.p.logprob_tolerance:
                return ScenarioOutput(
                    tuple(metrics),
                    artifacts,
                    skip_reason="the model's output does not depend on the image "
                    f"(first-token log-probs move {sensitivity:.2g}): a stale reuse cannot show",
                )
        return ScenarioOutput(tuple(metrics), artifacts, failures=tuple(failures))

    def _compare(self, cold: SlotReply, warm: SlotReply, gap: float) -> list[str]:
        diff = first_mismatch(list(cold.tokens), list(warm.tokens))
        if diff >= 0:
            return [
                f"warm output differs from cold at generated token {diff} "
                f"(cold {list(cold.tokens[diff : diff + 3])} vs "
                f"warm {list(warm.tokens[diff : diff + 3])})"
            ]
        if gap > self.p.logprob_tolerance:
            return [
                f"warm first-token log-probs differ from cold by {gap:.3g} "
                f"(tolerance {self.p.logprob_tolerance:g}): the slot answered another prompt"
            ]
        return []


SCENARIO = VisionPromptCacheScenario()
