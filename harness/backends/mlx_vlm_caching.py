"""Prompt caching for :class:`harness.backends.mlx_vlm.MlxVlmModel` (mixed into it).

Two layers:

- :class:`MlxVlmTextCaching` (:class:`harness.backends.base.PromptCaching`): text prompts
  through the language model and mlx-vlm's own cache classes (``mlx_vlm.models.cache``), as the
  ``prompt_cache`` scenario drives mlx-lm's;
- :class:`MlxVlmSlotCaching` (:class:`harness.backends.image_slot.ImageSlotCaching`): whole chat
  turns with images through ``mlx_vlm.stream_generate`` and its single-slot
  ``PromptCacheState``, as mlx-vlm's server and the chat engines built on it reuse a turn.

mlx imported lazily.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.backends.base import BackendError
from harness.backends.image_slot import SlotReply
from harness.core.exception_line import exception_line

PREFILL_STEP = 512


def untrimmable_reason(cache: Sequence[Any]) -> str | None:
    """None when every layer can be trimmed, else why not (one line), as mlx-lm's rule."""
    blocking = sorted({type(c).__name__ for c in cache if not c.is_trimmable()})
    if not blocking:
        return None
    wrapped = [c for c in cache if type(c).__name__ == "RotatingKVCache" and not c.is_trimmable()]
    why = (
        f"RotatingKVCache wrapped past its {wrapped[0].max_size}-token window"
        if wrapped
        else "it holds state that cannot be rewound"
    )
    return f"{', '.join(blocking)} cannot be trimmed: {why}"


class MlxVlmTextCaching:
    """:class:`harness.backends.base.PromptCaching` over the language model of a VLM."""

    model: Any

    def _reset_rope_state(self) -> None:
        """Forget the mRoPE offsets a Qwen-VL language model keeps from the last prompt."""
        language = getattr(self.model, "language_model", None)
        for attr in ("_position_ids", "_rope_deltas"):
            if hasattr(language, attr):
                setattr(language, attr, None)

    def make_cache(self, *, max_kv_size: int | None = None) -> Any:
        from mlx_vlm.models.cache import KVCache, RotatingKVCache, make_prompt_cache

        cache = make_prompt_cache(self.model.language_model, max_kv_size=max_kv_size)
        if max_kv_size is None:
            return cache
        return [
            RotatingKVCache(max_size=max_kv_size, keep=4) if type(c) is KVCache else c
            for c in cache
        ]

    def _forward(self, cache: Any, tokens: Sequence[int]) -> Any:
        import mlx.core as mx

        if not any(int(getattr(c, "offset", 0) or 0) for c in cache):
            self._reset_rope_state()
        out = self.model.language_model(mx.array([list(tokens)]), cache=cache)
        return getattr(out, "logits", out)

    def prefill(self, cache: Any, tokens: Sequence[int]) -> None:
        import mlx.core as mx

        ids = list(tokens)
        for start in range(0, len(ids), PREFILL_STEP):
            self._forward(cache, ids[start : start + PREFILL_STEP])
            mx.eval([c.state for c in cache])

    def generate_cached(
        self,
        cache: Any,
        tokens: Sequence[int],
        *,
        max_tokens: int,
        kv_bits: int | None = None,
        kv_group_size: int = 64,
    ) -> Iterator[int]:
        """Greedy tokens, one language-model call per step (kv_bits: not supported here)."""
        import mlx.core as mx

        if kv_bits is not None:
            raise BackendError("backend mlx_vlm: kv_bits is not supported by its text cache")
        ids = list(tokens)
        if len(ids) > 1:
            self.prefill(cache, ids[:-1])
            ids = ids[-1:]
        logits = self._forward(cache, ids)[:, -1, :]
        for _ in range(max_tokens):
            best: Any = mx.argmax(logits, axis=-1).tolist()
            token = int(best[0])
            logits = self._forward(cache, [token])[:, -1, :]  # the cache holds every reply token,
            mx.eval(logits)  # as mlx-lm's generate_step leaves it
            yield token

    def cache_types(self, cache: Any) -> list[str]:
        return sorted({type(c).__name__ for c in cache})

    def cache_offset(self, cache: Any) -> int:
        return max((int(getattr(c, "offset", 0) or 0) for c in cache), default=0)

    def cache_nbytes(self, cache: Any) -> int:
        return int(sum(c.nbytes for c in cache))

    def untrimmable(self, cache: Any) -> str | None:
        return untrimmable_reason(cache)

    def trim(self, cache: Any, n: int) -> int:
        """Drop the last ``n`` tokens of every layer (mlx-vlm 0.7.10 has no trim_prompt_cache)."""
        if untrimmable_reason(cache) is not None:
            return 0
        return min(int(c.trim(n)) for c in cache) if cache else 0

    def save_cache(self, cache: Any, path: Path) -> None:
        """Each layer's state arrays and meta state in one safetensors file (mlx-vlm 0.7.10 has
        no save_prompt_cache); :meth:`load_cache` rebuilds mlx-vlm's classes from it."""
        import mlx.core as mx

        arrays: dict[str, Any] = {}
        layers: list[dict[str, Any]] = []
        for i, layer in enumerate(cache):
            state = list(layer.state)
            arrays.update({f"{i}.{j}": a for j, a in enumerate(state)})
            meta = layer.meta_state
            layers.append(
                {
                    "class": type(layer).__name__,
                    "arrays": len(state),
                    "meta": list(meta) if isinstance(meta, (list, tuple)) else meta,
                }
            )
        mx.save_safetensors(str(path), arrays, {"layers": json.dumps(layers)})

    def load_cache(self, path: Path) -> Any:
        import mlx.core as mx
        from mlx_vlm.models import cache as vlm_cache

        loaded: Any = mx.load(str(path), return_metadata=True)
        arrays, metadata = loaded
        cache = []
        for i, layer in enumerate(json.loads(metadata["layers"])):
            klass = getattr(vlm_cache, str(layer["class"]))
            state = [arrays[f"{i}.{j}"] for j in range(int(layer["arrays"]))]
            meta = layer["meta"]
            cache.append(klass.from_state(state, tuple(meta) if isinstance(meta, list) else meta))
        return cache


class MlxVlmSlotCaching(MlxVlmTextCaching):
    """:class:`harness.backends.image_slot.ImageSlotCaching` through ``mlx_vlm.stream_generate``."""

    processor: Any

    def _slot_text(self, messages: Sequence[Mapping[str, Any]], images: int) -> str:
        from mlx_vlm.prompt_utils import apply_chat_template

        try:
            return str(
                apply_chat_template(
                    self.processor,
                    self.model.config,
                    [dict(m) for m in messages],
                    num_images=images,
                )
            )
        except Exception as exc:
            raise BackendError(f"mlx-vlm chat template failed: {exception_line(exc)}") from exc

    def image_token_ids(self) -> frozenset[int]:
        config = self.model.config
        ids = {getattr(config, k, None) for k in ("image_token_index", "image_token_id")}
        return frozenset(i for i in ids if isinstance(i, int))

    def chat_prompt_ids(
        self, messages: Sequence[Mapping[str, Any]], images: Sequence[Any]
    ) -> list[int]:
        from mlx_vlm.utils import prepare_inputs

        text = self._slot_text(messages, len(images))
        try:
            inputs = prepare_inputs(
                self.processor,
                images=list(images) or None,
                prompts=text,
                image_token_index=getattr(self.model.config, "image_token_index", None),
            )
        except Exception as exc:
            raise BackendError(
                f"mlx-vlm image preprocessing failed: {exception_line(exc)}"
            ) from exc
        return [int(t) for t in inputs["input_ids"].flatten().tolist()]

    def new_slot(self) -> Any:
        from mlx_vlm.generate.common import PromptCacheState

        return PromptCacheState()

    def slot_tokens(self, slot: Any) -> tuple[int, ...]:
        return tuple(int(t) for t in slot.token_ids or ())

    def slot_untrimmable(self, slot: Any) -> str | None:
        return untrimmable_reason(slot.cache) if slot.cache is not None else None

    def slot_cache_types(self, slot: Any) -> list[str]:
        return sorted({type(c).__name__ for c in slot.cache or ()})

    def generate_in_slot(
        self,
        slot: Any | None,
        messages: Sequence[Mapping[str, Any]],
        images: Sequence[Any],
        *,
        max_tokens: int,
        max_kv_size: int | None = None,
    ) -> SlotReply:
        import numpy as np
        from mlx_vlm import stream_generate

        text = self._slot_text(messages, len(images))
        self._reset_rope_state()
        tokens: list[int] = []
        cached = prompt = 0
        first: Any = None
        ttft = 0.0
        start = time.perf_counter()
        try:
            for result in stream_generate(
                self.model,
                self.processor,
                text,
                image=list(images) or None,
                max_tokens=max_tokens,
                temperature=0.0,
                prompt_cache_state=slot,
                max_kv_size=max_kv_size,
            ):
                if first is None:
                    ttft = time.perf_counter() - start
                    first = np.array(result.logprobs, dtype=np.float32).reshape(-1)
                    cached = int(getattr(result, "cached_tokens", 0) or 0)
                    prompt = int(getattr(result, "prompt_tokens", 0) or 0)
                tokens.append(int(result.token or 0))
        except Exception as exc:
            raise BackendError(f"mlx-vlm generation failed: {exception_line(exc)}") from exc
        return SlotReply(tuple(tokens[:max_tokens]), ttft, cached, prompt, first)
