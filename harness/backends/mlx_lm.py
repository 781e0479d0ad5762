"""mlx-lm backend: ``mlx_lm.load`` and ``mlx_lm.generate.generate_step`` (imported lazily)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.backends.base import BackendError, LoadedModel, LoadInfo, weights_bytes


class MlxLmModel:
    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer

    @property
    def eos_token_ids(self) -> frozenset[int]:
        return frozenset(int(t) for t in self.tokenizer.eos_token_ids)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

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

    def load(self, path: Path) -> tuple[LoadedModel, LoadInfo]:
        import mlx.core as mx
        from mlx_lm import load

        from harness.runner.device import mlx_device

        mx.reset_peak_memory()
        start = time.perf_counter()
        try:
            model, tokenizer = load(str(path))[:2]
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise BackendError(f"mlx_lm.load failed: {type(exc).__name__}: {first}") from exc
        mx.eval(model.parameters())
        load_s = time.perf_counter() - start
        info = LoadInfo(
            load_s=load_s,
            weights_bytes=weights_bytes(path),
            device=mlx_device(),
            details={
                "mlx_active_bytes": int(mx.get_active_memory()),
                "mlx_peak_bytes": int(mx.get_peak_memory()),
            },
        )
        return MlxLmModel(model, tokenizer), info


BACKEND = MlxLmBackend()
