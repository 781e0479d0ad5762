"""Batched generation through mlx-lm (:class:`harness.backends.base.BatchGenerating`): its
``BatchGenerator`` (continuous batching, as ``batch_generate`` and ``mlx_lm.server`` use it),
with every request admitted at once: the prompts prefilled as one padded batch, then one
forward pass a step for the whole batch. Greedy (its default sampler), EOS ignored (no stop
tokens given), so every request makes ``max_tokens`` tokens (mixed into the mlx-lm model)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any


class MlxLmBatching:
    """Decodes a batch of prompts with ``mlx_lm.generate.BatchGenerator``."""

    model: Any

    def stream_batch(
        self, prompts: Sequence[Sequence[int]], *, max_tokens: int
    ) -> Iterator[Sequence[tuple[int, int]]]:
        from mlx_lm.generate import BatchGenerator

        size = len(prompts)
        generator = BatchGenerator(
            self.model,
            max_tokens=max_tokens,
            completion_batch_size=size,
            prefill_batch_size=size,
        )
        try:
            uids = generator.insert([list(p) for p in prompts], [max_tokens] * size)
            index = {uid: i for i, uid in enumerate(uids)}
            while True:
                prompt_steps, generated = generator.next()
                if not prompt_steps and not generated:
                    return
                if generated:
                    yield [(index[r.uid], int(r.token)) for r in generated]
        finally:
            generator.close()
