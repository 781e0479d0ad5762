"""Memory a model needs at a context length, and memory the machine has.

The estimate is the MLX allocator's view (what ``mx.get_peak_memory()`` reports during prefill
and decode, after the model is loaded) plus a fixed process overhead for the gate:

- weights: the tensor bytes from the headers (quantized weights as stored);
- KV cache: per attention layer, 2 x KV heads x head_dim x dtype bytes per token, at the capacity
  mlx-lm allocates (``KVCache.step`` = 256 tokens at a time), plus one layer's worth for the
  moment a growing cache is concatenated; sliding-window layers hold at most their window while
  decoding, but window - 1 + the prefill chunk while a chunk is processed (RotatingKVCache's
  concat path); non-attention layers (lfm2 conv, linear attention, SSM) a fixed state;
- a reference model the case loads beside its own (``quality``'s ``reference``): its weights
  stay resident for the case; the two forward passes run one after the other, so only the
  larger of their KV cache, state and transient buffers counts (:func:`with_reference`);
- activations of the largest prefill chunk: attention scores materialised in float32
  (``SCORE_COPIES`` x chunk x keys x heads x 4 B, as MLX's CPU attention does; 0 with
  ``fused_attention=True`` for Metal's fused kernel) plus per-token buffers of
  ``ACT_HIDDEN x (hidden + heads x head_dim) + ACT_MLP x MLP width`` elements, and the last
  token's logits (every position's when the scenario scores the text). Only the prompt goes
  through prefill: generated tokens are decoded one at a
  time (one query row each), so with ``prompt_tokens`` given the chunk and its keys come from
  the prompt while the KV cache still holds the whole context; without it the whole context is
  taken as prompt (the larger, safe figure).

The three coefficients were fitted once, by relative least squares, on MLX 0.32.4 (CPU, float32)
in mlx-lm's own prefill + decode loop: the 8 zoo text families and 7 more llama shapes (2-16
heads, head_dim 16-64, 2-6 layers) at 32-1024 tokens; every median peak is within -15%..+19%.
They are the same for every family, not tuned per family. For half-precision weights on CPU the
score term is an upper bound (MLX keeps ~2.3 B per score element there, measured).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from harness.probe.types import Probe, TextArch

DEFAULT_PREFILL_CHUNK = 2048  # mlx_lm.generate's prefill_step_size
DEFAULT_KV_STEP = 256
PROCESS_OVERHEAD_BYTES = 256 * 1024**2  # interpreter, mlx, tokenizer (~85 MB RSS on Linux CPU)
SCORE_COPIES = 1.25
ACT_HIDDEN = 4.5
ACT_MLP = 1.5
SCORE_BYTES = 4
DTYPE_BYTES = {"F32": 4, "F64": 8, "F16": 2, "BF16": 2}


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes, by component. ``mlx_peak_bytes`` is comparable to ``mx.get_peak_memory()``."""

    context_tokens: int
    weights_bytes: int
    kv_cache_bytes: int
    state_bytes: int
    activation_bytes: int
    process_overhead_bytes: int
    approximate: tuple[str, ...] = ()  # what the estimate could not model for this model
    prompt_tokens: int | None = None  # prefilled part of the context; None: all of it
    reference_weights_bytes: int = 0  # a reference model loaded beside it for the case

    @property
    def mlx_peak_bytes(self) -> int:
        return (
            self.weights_bytes
            + self.reference_weights_bytes
            + self.kv_cache_bytes
            + self.state_bytes
            + self.activation_bytes
        )

    @property
    def total_bytes(self) -> int:
        return self.mlx_peak_bytes + self.process_overhead_bytes


def estimate_memory(
    probe: Probe,
    context_tokens: int,
    *,
    kv_dtype_bytes: int | None = None,
    prefill_chunk: int = DEFAULT_PREFILL_CHUNK,
    kv_step: int = DEFAULT_KV_STEP,
    fused_attention: bool = False,
    process_overhead_bytes: int = PROCESS_OVERHEAD_BYTES,
    prompt_tokens: int | None = None,
    text_only: bool = False,
    logits_rows: int = 1,
) -> MemoryEstimate:
    """Peak memory to prefill and decode ``context_tokens`` tokens (prompt + generated).

    ``prompt_tokens`` (at most ``context_tokens``) is the prefilled part; None takes the whole
    context as prompt. ``text_only``: the backend loads only the language model of a multimodal
    checkpoint (mlx-lm does), so vision/audio tower weights are not counted. ``logits_rows``:
    positions whose logits a forward pass keeps (1 when generating; every position when a
    scenario scores the text, as ``quality`` does).
    """
    if context_tokens < 1:
        raise ValueError("context_tokens must be at least 1")
    if prompt_tokens is not None and not 1 <= prompt_tokens <= context_tokens:
        raise ValueError("prompt_tokens must be between 1 and context_tokens")
    approximate: list[str] = []
    weights = probe.weights_bytes or 0
    if text_only:
        weights -= probe.tower_weights_bytes
    if probe.weights_bytes is None:
        approximate.append("weights: no weight headers")
    dtype = kv_dtype_bytes or DTYPE_BYTES.get(probe.compute_dtype or probe.dtype or "", 2)
    arch = probe.text
    if arch is None:
        approximate.append("kv cache and activations: no decoder dimensions in config")
        return MemoryEstimate(
            context_tokens,
            weights,
            0,
            0,
            0,
            process_overhead_bytes,
            tuple(approximate),
            prompt_tokens,
        )
    kv = kv_cache_bytes(
        arch, context_tokens, dtype, chunk=prefill_chunk, step=kv_step, prompt=prompt_tokens
    )
    state = sum(arch.state_elements.get(k, 0) for k in arch.layer_kinds) * dtype
    known = {"full", "sliding", "conv", "linear", "ssm"}
    odd = sorted(set(arch.layer_kinds) - known)
    if odd:
        approximate.append(f"state of {', '.join(odd)} layers: guessed as one hidden vector")
    if arch.num_experts:
        approximate.append("MoE routing buffers not modelled")
    acts = activation_bytes(
        arch,
        prompt_tokens or context_tokens,
        dtype,
        chunk=prefill_chunk,
        fused=fused_attention,
        logits_rows=logits_rows,
    )
    return MemoryEstimate(
        context_tokens=context_tokens,
        weights_bytes=weights,
        kv_cache_bytes=kv,
        state_bytes=state,
        activation_bytes=acts,
        process_overhead_bytes=process_overhead_bytes,
        approximate=tuple(approximate),
        prompt_tokens=prompt_tokens,
    )


def with_reference(estimate: MemoryEstimate, reference: MemoryEstimate) -> MemoryEstimate:
    """``estimate`` of a case that also loads ``reference`` (estimated for the same tokens) and
    runs it after its own model: both weights resident, the larger transient parts once."""
    return replace(
        estimate,
        reference_weights_bytes=estimate.reference_weights_bytes + reference.weights_bytes,
        kv_cache_bytes=max(estimate.kv_cache_bytes, reference.kv_cache_bytes),
        state_bytes=max(estimate.state_bytes, reference.state_bytes),
        activation_bytes=max(estimate.activation_bytes, reference.activation_bytes),
        approximate=estimate.approximate + tuple(f"reference: {a}" for a in reference.approximate),
    )


def kv_cache_bytes(
    arch: TextArch,
    context: int,
    dtype_bytes: int,
    *,
    chunk: int,
    step: int,
    prompt: int | None = None,
) -> int:
    """KV cache at its peak while ``context`` tokens (``prompt`` of them prefilled, default
    all) go through prefill and decode."""
    per_token = 2 * arch.num_kv_heads * arch.head_dim * dtype_bytes
    prefill = min(prompt or context, chunk)
    capacity = _round_up(context, step)
    first = _round_up(prefill, step)  # the first allocation; growing past it concatenates
    full = sum(1 for k in arch.layer_kinds if k == "full")
    sliding = sum(1 for k in arch.layer_kinds if k == "sliding")
    window = arch.sliding_window or context
    if context <= window:
        sliding_tokens = min(_round_up(context, step), max(window, 1))
    else:
        sliding_tokens = min(context, window - 1 + prefill)
    growth = capacity if capacity > first and full else 0  # one layer mid-concatenation
    return per_token * (full * capacity + sliding * sliding_tokens + growth)


def activation_bytes(
    arch: TextArch, prompt: int, dtype_bytes: int, *, chunk: int, fused: bool, logits_rows: int = 1
) -> int:
    """Transient buffers of the largest chunk of a ``prompt``-token prefill, and the logits
    (three float32 copies: logits, log-sum-exp, log-probabilities) of ``logits_rows``."""
    n = min(prompt, chunk)
    scores = 0.0 if fused else SCORE_COPIES * n * prompt * arch.num_heads * SCORE_BYTES
    q_width = arch.num_heads * arch.head_dim
    per_token = ACT_HIDDEN * (arch.hidden_size + q_width) + ACT_MLP * arch.intermediate_size
    logits = 3 * arch.vocab_size * 4 * max(logits_rows, 1)
    return int(scores + n * per_token * dtype_bytes + logits)


def _round_up(value: int, step: int) -> int:
    return math.ceil(value / step) * step
