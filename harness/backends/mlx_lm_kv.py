"""mlx-lm's generation through a quantized KV cache
(:class:`harness.backends.kv_runs.KVQuantizedRuns`), mixed into
:class:`harness.backends.mlx_lm.MlxLmModel`: ``generate_step`` with ``kv_bits``, the cache made
here so its bytes can be read after the run."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from harness.backends.kv_runs import KVRun, KVSetting, KVUnsupported
from harness.core.exception_line import exception_line


def arrays(value: Any) -> list[Any]:
    """The mlx arrays inside a cache's keys/values/state (tuples for quantized caches)."""
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in arrays(item)]
    return [value] if hasattr(value, "nbytes") and hasattr(value, "shape") else []


def held_bytes(cache: Sequence[Any], tokens: int) -> int:
    """Bytes the cache's layers hold for ``tokens`` tokens: per layer, the bytes of one slot of
    its key and value buffers (data, scales and biases when quantized) times the tokens it
    keeps (a sliding window keeps at most its size); a layer without keys (recurrent state)
    counts its whole state."""
    total = 0.0
    for layer in cache:
        keys = arrays(getattr(layer, "keys", None))
        values = arrays(getattr(layer, "values", None))
        if keys and values and len(keys[0].shape) >= 2:
            slots = max(int(keys[0].shape[-2]), 1)
            window = getattr(layer, "max_size", None)
            kept = tokens if window is None else min(tokens, int(window))
            total += sum(int(a.nbytes) for a in keys + values) / slots * kept
        else:
            total += sum(int(a.nbytes) for a in arrays(getattr(layer, "state", None)))
    return round(total)


def _forcing(forced: Sequence[int]) -> Callable[[Any], Any]:
    """A sampler that returns ``forced`` in order (the last one again past the end: the step
    generate_step computes ahead of the last token is never yielded)."""
    import mlx.core as mx

    calls = [0]

    def sample(logprobs: Any) -> Any:
        index = min(calls[0], len(forced) - 1)
        calls[0] += 1
        return mx.array([forced[index]] * int(logprobs.shape[0]), dtype=mx.uint32)

    return sample


class MlxLmKVRuns:
    """``kv_run`` on an mlx-lm model (mixed into :class:`harness.backends.mlx_lm.MlxLmModel`)."""

    model: Any

    def kv_run(
        self,
        prompt: Sequence[int],
        *,
        max_tokens: int,
        kv: KVSetting,
        forced: Sequence[int] | None = None,
    ) -> KVRun:
        import mlx.core as mx
        import numpy as np
        from mlx_lm.generate import generate_step, generation_stream, wired_limit
        from mlx_lm.models.cache import make_prompt_cache

        cache = make_prompt_cache(self.model)
        sampler = _forcing(forced) if forced else None
        mx.reset_peak_memory()
        tokens: list[int] = []
        rows: list[Any] = []
        stamps: list[float] = []
        with wired_limit(self.model, [generation_stream]):  # type: ignore[list-item]
            start = time.perf_counter()
            steps = generate_step(
                mx.array(list(prompt)),
                self.model,
                max_tokens=max_tokens,
                sampler=sampler,
                prompt_cache=cache,
                kv_bits=kv.bits,
                kv_group_size=kv.group_size,
                quantized_kv_start=kv.quantized_start,
            )
            try:
                for token, logprobs in steps:
                    stamps.append(time.perf_counter() - start)
                    tokens.append(int(token))
                    rows.append(logprobs)
            except (NotImplementedError, ValueError) as exc:  # mlx-lm's or mx.quantize's
                raise KVUnsupported(
                    f"mlx-lm cannot store this cache at {kv.label} (group size "
                    f"{kv.group_size}): {exception_line(exc)}"
                ) from exc
        peak = int(mx.get_peak_memory())
        stacked = mx.stack(rows).astype(mx.float32) if rows else mx.zeros((0, 0))
        mx.eval(stacked)
        return KVRun(
            tokens=tuple(tokens),
            logprobs=np.array(stacked, dtype=np.float32),
            token_times_s=tuple(stamps),
            kv_bytes=held_bytes(cache, len(prompt)),
            allocated_bytes=int(sum(int(c.nbytes) for c in cache)),
            peak_bytes=peak,
            cache_types=tuple(sorted({type(c).__name__ for c in cache})),
        )
