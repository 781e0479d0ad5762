"""mlx-lm backend: ``mlx_lm.load`` and ``mlx_lm.generate.generate_step`` (imported lazily)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from harness.backends.base import BackendCapability, BackendError, LoadInfo, ThinkMarkers
from harness.backends.chat_templating import TokenizerChatRendering
from harness.backends.decode_traffic import CacheLayerTraffic, DecodeTraffic
from harness.backends.mlx_lm_batch import MlxLmBatching
from harness.backends.mlx_lm_constrained import MlxLmConstrained
from harness.backends.mlx_lm_draft import MlxLmDrafting
from harness.backends.mlx_lm_kv import MlxLmKVRuns
from harness.backends.mlx_lm_quant import MlxLmWeightQuant
from harness.core.exception_line import exception_line

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from harness.toolcalls.model import Extraction

TRAFFIC_PROBE_TOKENS = 8  # tokens prefilled to see what one cached token takes per layer


class MlxLmCaching:
    """Prompt-cache operations on mlx-lm's own cache classes (mixed into :class:`MlxLmModel`)."""

    model: Any

    def make_cache(self, *, max_kv_size: int | None = None) -> Any:
        """The model's own cache; with ``max_kv_size`` its full-attention layers rotate.

        mlx-lm's ``make_prompt_cache`` ignores ``max_kv_size`` for models that define
        ``make_cache`` (llama among them in 0.32), so the harness swaps the layers itself.
        """
        from mlx_lm.models.cache import KVCache, RotatingKVCache, make_prompt_cache

        cache = make_prompt_cache(self.model, max_kv_size=max_kv_size)
        if max_kv_size is None:
            return cache
        return [
            RotatingKVCache(max_size=max_kv_size, keep=4) if type(c) is KVCache else c
            for c in cache
        ]

    def prefill(self, cache: Any, tokens: Sequence[int], step: int = 2048) -> None:
        import mlx.core as mx

        array = mx.array(list(tokens))
        for start in range(0, len(tokens), step):
            self.model(array[start : start + step][None], cache=cache)
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
        import mlx.core as mx
        from mlx_lm.generate import generate_step

        steps = generate_step(
            mx.array(list(tokens)),
            self.model,
            max_tokens=max_tokens,
            prompt_cache=cache,
            kv_bits=kv_bits,
            kv_group_size=kv_group_size,
            quantized_kv_start=0,
        )
        for token, _logprobs in steps:
            yield int(token)

    def cache_types(self, cache: Any) -> list[str]:
        return sorted({type(c).__name__ for c in cache})

    def cache_offset(self, cache: Any) -> int:
        offsets = [int(getattr(c, "offset", 0) or 0) for c in cache]
        return max(offsets) if offsets else 0

    def cache_nbytes(self, cache: Any) -> int:
        return int(sum(c.nbytes for c in cache))

    def untrimmable(self, cache: Any) -> str | None:
        blocking = sorted({type(c).__name__ for c in cache if not c.is_trimmable()})
        if not blocking:
            return None
        wrapped = [
            c for c in cache if type(c).__name__ == "RotatingKVCache" and not c.is_trimmable()
        ]
        why = (
            f"RotatingKVCache wrapped past its {wrapped[0].max_size}-token window"
            if wrapped
            else "it holds recurrent state that cannot be rewound"
        )
        return f"{', '.join(blocking)} cannot be trimmed: {why}"

    def trim(self, cache: Any, n: int) -> int:
        from mlx_lm.models.cache import trim_prompt_cache

        trimmed: Any = trim_prompt_cache(cache, n)  # annotated List[Any] upstream, returns int
        return int(trimmed)

    def save_cache(self, cache: Any, path: Path) -> None:
        from mlx_lm.models.cache import save_prompt_cache

        save_prompt_cache(str(path), cache)

    def load_cache(self, path: Path) -> Any:
        from mlx_lm.models.cache import load_prompt_cache

        return load_prompt_cache(str(path))


class MlxLmToolCalling:
    """Tool calling as ``mlx_lm.server`` does it (mixed into :class:`MlxLmModel`): the parser
    the tokenizer wrapper inferred, and the server's parsing replayed on generated tokens."""

    model: Any
    tokenizer: Any
    path: Path | None

    def tool_parser_name(self) -> str | None:
        parser = self.tokenizer.tool_parser
        if parser is None:
            return None
        return str(getattr(parser, "__module__", "") or "?").rsplit(".", 1)[-1]

    def tool_markers(self) -> tuple[str, ...]:
        marks = (self.tokenizer.tool_call_start, self.tokenizer.tool_call_end)
        return tuple(m for m in marks if m)

    def chat_template_text(self) -> str | None:
        template = self.tokenizer.chat_template
        return template if isinstance(template, str) else None

    def with_chat_template(self, template: str) -> MlxLmModel:
        """A tokenizer loaded as ``mlx_lm.server --chat-template`` loads it, same weights."""
        from mlx_lm.utils import load_tokenizer

        if self.path is None:
            raise BackendError("cannot reload the tokenizer: the model's directory is unknown")
        eos = sorted(int(t) for t in self.tokenizer.eos_token_ids)
        tokenizer = load_tokenizer(self.path, {"chat_template": template}, eos_token_ids=eos)
        return MlxLmModel(self.model, tokenizer, self.path)

    def replay_server(
        self,
        prompt: Sequence[int],
        generated: Sequence[int],
        tools: Sequence[Mapping[str, Any]] | None,
        finish_reason: Literal["stop", "length"],
    ) -> tuple[Extraction, Extraction]:
        from harness.toolcalls import mlx_lm_server, mlx_lm_stream

        if self.tokenizer.tool_parser is None:
            raise BackendError("no tool parser was inferred for this model")
        initial = mlx_lm_server.initial_state(self.tokenizer, prompt)
        text = str(self.tokenizer.decode(list(generated)))
        whole = mlx_lm_server.extract_text(self.tokenizer, text, tools, finish_reason, initial)
        streamed = mlx_lm_stream.extract_stream(
            self.tokenizer, generated, tools, finish_reason, initial
        )
        return whole, streamed


def _leaves(value: Any) -> list[Any]:
    """The mlx arrays inside a cache's keys/values/state (tuples for quantized caches)."""
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value] if hasattr(value, "nbytes") and hasattr(value, "shape") else []


class MlxLmMeasures:
    """What a decode step reads (:class:`harness.backends.decode_traffic.ReportsTraffic`) and
    next-token log-probabilities (:class:`harness.backends.scoring.Scoring`); mixed into
    :class:`MlxLmModel`."""

    model: Any

    def decode_traffic(self) -> DecodeTraffic:
        import mlx.core as mx
        from mlx.utils import tree_flatten
        from mlx_lm.models.cache import make_prompt_cache

        flat: Any = tree_flatten(self.model.parameters())
        params: list[tuple[str, Any]] = list(flat)
        total = sum(int(v.nbytes) for _, v in params)
        if any("lm_head" in name for name, _ in params):  # untied: the table is only indexed
            embed = [(n, v) for n, v in params if "embed_tokens" in n]
            rows = max((int(v.shape[0]) for n, v in embed if n.endswith("weight")), default=1)
            table = sum(int(v.nbytes) for _, v in embed)
            total -= table - table // max(rows, 1)
        cache = make_prompt_cache(self.model)
        self.model(mx.array([list(range(1, TRAFFIC_PROBE_TOKENS + 1))]), cache=cache)
        layers: list[CacheLayerTraffic] = []
        fixed = 0
        for layer in cache:
            keys = _leaves(getattr(layer, "keys", None))
            values = _leaves(getattr(layer, "values", None))
            if keys and values and len(keys[0].shape) >= 2:
                held = int(keys[0].shape[-2])
                nbytes = sum(int(a.nbytes) for a in keys + values)
                window = getattr(layer, "max_size", None)
                layers.append(
                    CacheLayerTraffic(nbytes / max(held, 1), int(window) if window else None)
                )
            else:
                fixed += sum(int(a.nbytes) for a in _leaves(getattr(layer, "state", None)))
        return DecodeTraffic(total, tuple(layers), fixed, self._matmul_params())

    def _matmul_params(self) -> int:
        """Weights in matrix products per token: every linear layer (quantized ones at their
        logical size) and, when the output head is tied to it, the embedding table."""
        import mlx.nn as nn
        from mlx.utils import tree_flatten

        flat: Any = tree_flatten(
            self.model.leaf_modules(), is_leaf=lambda m: isinstance(m, nn.Module)
        )
        modules: list[tuple[str, Any]] = list(flat)
        tied = not any("lm_head" in name for name, _ in modules)
        count = 0
        for name, module in modules:
            is_embedding = isinstance(module, nn.Embedding | nn.QuantizedEmbedding)
            if is_embedding and not (tied and "embed_tokens" in name):
                continue
            if isinstance(module, nn.QuantizedLinear | nn.QuantizedEmbedding):
                count += (
                    int(module.weight.shape[0])
                    * int(module.scales.shape[-1])
                    * int(module.group_size)
                )
            elif isinstance(module, nn.Linear | nn.Embedding):
                count += int(module.weight.size)
        return count

    def next_token_logprobs(self, tokens: Sequence[int]) -> NDArray[np.float32]:
        import mlx.core as mx
        import numpy as np

        logits = self.model(mx.array(list(tokens))[None])[0].astype(mx.float32)
        logprobs = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
        mx.eval(logprobs)
        return np.array(logprobs, dtype=np.float32)


class MlxLmModel(
    MlxLmCaching,
    MlxLmToolCalling,
    MlxLmMeasures,
    MlxLmDrafting,
    MlxLmConstrained,
    MlxLmKVRuns,
    MlxLmBatching,
    MlxLmWeightQuant,
    TokenizerChatRendering,
):
    def __init__(self, model: Any, tokenizer: Any, path: Path | None = None) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.path = path

    @property
    def eos_token_ids(self) -> frozenset[int]:
        return frozenset(int(t) for t in self.tokenizer.eos_token_ids)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def encode_prompt(self, text: str) -> list[int]:
        """As mlx_lm.server encodes a completions prompt: with BOS where the tokenizer adds it."""
        return list(self.tokenizer.encode(text))

    def decode(self, tokens: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(tokens)))

    def chat_tokens(
        self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Any] | None = None
    ) -> list[int]:
        if not self.tokenizer.chat_template:
            raise BackendError("the model has no chat template")
        kwargs: dict[str, Any] = {"add_generation_prompt": True}
        if tools:
            kwargs["tools"] = list(tools)
        return list(self.tokenizer.apply_chat_template(list(messages), **kwargs))

    def vocab_size(self) -> int:
        return len(self.tokenizer.get_vocab())

    def think_markers(self) -> ThinkMarkers | None:
        """The think markers mlx-lm recognises in the tokenizer, as ``mlx_lm.server`` splits
        reasoning from content with them (None: it recognises none)."""
        t = self.tokenizer
        if not getattr(t, "has_thinking", False):
            return None
        return ThinkMarkers(
            tuple(int(i) for i in t.think_start_tokens),
            tuple(int(i) for i in t.think_end_tokens),
            str(t.think_start),
            str(t.think_end),
        )

    def thinking_chat_tokens(
        self, messages: Sequence[Mapping[str, Any]], *, enable_thinking: bool | None
    ) -> list[int]:
        """The chat prompt with thinking on or off (None: as mlx-lm renders it by default,
        which is on where it recognises think markers)."""
        if not self.tokenizer.chat_template:
            raise BackendError("the model has no chat template")
        kwargs: dict[str, Any] = {"add_generation_prompt": True}
        if enable_thinking is not None:
            kwargs["enable_thinking"] = enable_thinking
        return list(self.tokenizer.apply_chat_template(list(messages), **kwargs))

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
        from mlx_lm.generate import generate_step, generation_stream, wired_limit
        from mlx_lm.sample_utils import make_sampler

        if seed is not None:
            mx.random.seed(seed)
        sampler = make_sampler(temp=temperature)
        eos = self.eos_token_ids
        steps = generate_step(
            mx.array(list(prompt)), self.model, max_tokens=max_tokens, sampler=sampler
        )
        with wired_limit(self.model, [generation_stream]):  # type: ignore[list-item]
            for token, _logprobs in steps:
                token_id = int(token)
                if not ignore_eos and token_id in eos:
                    return
                yield token_id


class MlxLmBackend:
    name = "mlx_lm"
    capabilities = frozenset(
        {
            BackendCapability.TEXT_GENERATION,
            BackendCapability.PROMPT_CACHE,
            BackendCapability.TOOL_PARSING,
            BackendCapability.DRAFT_DECODING,
            BackendCapability.CONSTRAINED_DECODING,
            BackendCapability.BATCH_GENERATION,
            BackendCapability.WEIGHT_QUANTIZATION,
        }
    )

    def load(self, path: Path) -> tuple[MlxLmModel, LoadInfo]:
        import mlx.core as mx
        from mlx_lm import load

        from harness.backends.mlx_runtime import loaded_info

        mx.reset_peak_memory()
        start = time.perf_counter()
        try:
            model, tokenizer = load(str(path))[:2]
        except Exception as exc:
            raise BackendError(f"mlx_lm.load failed: {exception_line(exc)}") from exc
        mx.eval(model.parameters())
        info = loaded_info(path, start)
        return MlxLmModel(model, tokenizer, path), info


BACKEND = MlxLmBackend()
