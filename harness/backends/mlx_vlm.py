"""mlx-vlm backend: ``mlx_vlm.load``, its chat templates and processors
(``mlx_vlm.prompt_utils.apply_chat_template``, ``mlx_vlm.utils.prepare_inputs``) and
``mlx_vlm.generate.ar.generate_step`` (all imported lazily).

Text prompts go through the language model alone; a turn with images is preprocessed first
(timed apart: the processor's resizing, patching and tokenizing) and the vision encoder runs
inside the first generation step, so it counts in the time to first token.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.backends.base import (
    BackendCapability,
    BackendError,
    ImagePrompt,
    LoadInfo,
)
from harness.backends.mlx_vlm_caching import MlxVlmSlotCaching
from harness.backends.mlx_vlm_tools import MlxVlmToolCalling
from harness.core.exception_line import exception_line

PLAIN_INPUTS = ("input_ids", "pixel_values", "attention_mask")


def image_token_id(config: Any) -> int | None:
    """The id of the placeholder token images become (``image_token_index`` / ``_id``)."""
    for key in ("image_token_index", "image_token_id"):
        value = getattr(config, key, None)
        if isinstance(value, int):
            return value
    return None


def config_eos(config: Any) -> set[int]:
    value = getattr(config, "eos_token_id", None)
    if isinstance(value, int):
        return {value}
    if isinstance(value, (list, tuple)):
        return {int(v) for v in value if isinstance(v, int)}
    return set()


class MlxVlmModel(MlxVlmSlotCaching, MlxVlmToolCalling):
    """A model and its processor as ``mlx_vlm.load`` returns them: text and image generation,
    prompt caching (text, and image turns in a single slot), tool calling with mlx-vlm's parsers
    and its chat template as mlx-vlm renders it."""

    def __init__(self, model: Any, processor: Any, path: Path | None = None) -> None:
        self.model = model
        self.processor = processor
        self.path = path

    @property
    def eos_token_ids(self) -> frozenset[int]:
        ids = config_eos(self.model.config)
        eos = getattr(self.tokenizer, "eos_token_id", None)
        if isinstance(eos, int):
            ids.add(eos)
        return frozenset(ids)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, tokens: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(tokens)))

    def vocab_size(self) -> int:
        return len(self.tokenizer.get_vocab())

    def encode_prompt(self, text: str) -> list[int]:
        """As a server encodes a completions prompt: with the tokenizer's special tokens."""
        return list(self.tokenizer.encode(text))

    @property
    def bos_token_id(self) -> int | None:
        value = getattr(self.tokenizer, "bos_token_id", None)
        return value if isinstance(value, int) else None

    def render_chat(self, messages: Sequence[Mapping[str, Any]], **template_kwargs: Any) -> str:
        """The prompt text as mlx-vlm renders it (``mlx_vlm.prompt_utils.apply_chat_template``)."""
        return self._chat_text(messages, 0, **template_kwargs)

    def _chat_text(
        self, messages: Sequence[Mapping[str, Any]] | str, images: int, **template_kwargs: Any
    ) -> str:
        from mlx_vlm.prompt_utils import apply_chat_template

        prompt: Any = messages if isinstance(messages, str) else [dict(m) for m in messages]
        try:
            return str(
                apply_chat_template(
                    self.processor,
                    self.model.config,
                    prompt,
                    num_images=images,
                    **template_kwargs,
                )
            )
        except Exception as exc:
            raise BackendError(f"mlx-vlm chat template failed: {exception_line(exc)}") from exc

    def _tokenize(self, text: str) -> list[int]:
        from mlx_vlm.utils import should_add_special_tokens

        add = should_add_special_tokens(self.model.config.model_type, self.processor)
        return list(self.tokenizer.encode(text, add_special_tokens=add))

    def chat_tokens(
        self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Any] | None = None
    ) -> list[int]:
        extra: dict[str, Any] = {"tools": list(tools)} if tools else {}
        return self._tokenize(self._chat_text(messages, 0, **extra))

    def _generate(
        self,
        input_ids: Any,
        pixel_values: Any,
        mask: Any,
        extra: Mapping[str, Any],
        *,
        max_tokens: int,
        ignore_eos: bool,
        temperature: float,
        seed: int | None,
    ) -> Iterator[int]:
        import mlx.core as mx
        from mlx_vlm.generate.ar import generate_step

        if seed is not None:
            mx.random.seed(seed)
        self._reset_rope_state()
        eos = self.eos_token_ids
        steps = generate_step(
            input_ids,
            self.model,
            pixel_values,
            mask,
            max_tokens=max_tokens,
            temperature=temperature,
            **dict(extra),
        )
        try:
            for token, _logprobs in steps:
                token_id = int(token)
                if not ignore_eos and token_id in eos:
                    return
                yield token_id
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError(f"mlx-vlm generation failed: {exception_line(exc)}") from exc

    def stream_tokens(
        self,
        prompt: Sequence[int],
        *,
        max_tokens: int,
        ignore_eos: bool = True,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Iterator[int]:
        import mlx.core as mx

        ids = mx.array([list(prompt)])
        yield from self._generate(
            ids,
            None,
            None,
            {},
            max_tokens=max_tokens,
            ignore_eos=ignore_eos,
            temperature=temperature,
            seed=seed,
        )

    def prepare_images(self, text: str, images: Sequence[Any]) -> ImagePrompt:
        import mlx.core as mx
        from mlx_vlm.utils import prepare_inputs, should_add_special_tokens

        prompt = self._chat_text(text, len(images))
        config = self.model.config
        start = time.perf_counter()
        try:
            inputs = prepare_inputs(
                self.processor,
                images=list(images) or None,
                prompts=prompt,
                image_token_index=getattr(config, "image_token_index", None),
                add_special_tokens=should_add_special_tokens(config.model_type, self.processor),
            )
            arrays = [v for v in inputs.values() if isinstance(v, mx.array)]
            mx.eval(arrays)
        except Exception as exc:
            raise BackendError(
                f"mlx-vlm image preprocessing failed: {exception_line(exc)}"
            ) from exc
        preprocess_s = time.perf_counter() - start
        ids = [int(t) for t in inputs["input_ids"].flatten().tolist()]
        token = image_token_id(config)
        return ImagePrompt(
            prompt_tokens=len(ids),
            image_tokens=sum(1 for t in ids if t == token) if token is not None else 0,
            images=len(images),
            preprocess_s=preprocess_s,
            inputs=dict(inputs),
        )

    def stream_image_prompt(
        self,
        prompt: ImagePrompt,
        *,
        max_tokens: int,
        ignore_eos: bool = True,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Iterator[int]:
        inputs: Mapping[str, Any] = prompt.inputs
        extra = {k: v for k, v in inputs.items() if k not in PLAIN_INPUTS}
        yield from self._generate(
            inputs["input_ids"],
            inputs.get("pixel_values"),
            inputs.get("attention_mask"),
            extra,
            max_tokens=max_tokens,
            ignore_eos=ignore_eos,
            temperature=temperature,
            seed=seed,
        )


class MlxVlmBackend:
    name = "mlx_vlm"
    capabilities = frozenset(
        {
            BackendCapability.TEXT_GENERATION,
            BackendCapability.IMAGES,
            BackendCapability.PROMPT_CACHE,
            BackendCapability.TOOL_PARSING,
        }
    )

    def load(self, path: Path) -> tuple[MlxVlmModel, LoadInfo]:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # processors may try the hub otherwise
        import mlx.core as mx
        from mlx_vlm import load

        from harness.backends.mlx_runtime import loaded_info

        mx.reset_peak_memory()
        start = time.perf_counter()
        try:
            model, processor = load(str(path))[:2]
        except Exception as exc:
            raise BackendError(f"mlx_vlm.load failed: {exception_line(exc)}") from exc
        mx.eval(model.parameters())
        info = loaded_info(path, start)
        return MlxVlmModel(model, processor, path), info


BACKEND = MlxVlmBackend()
