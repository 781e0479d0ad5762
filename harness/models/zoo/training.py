"""The zoo's training loop: a tiny model trained in place, on this CPU, to answer prompts with
given answers (the callers' tool calls, the thinker's ``<think>`` block and answer).

A step draws a batch of :class:`Example` (prompt and answer tokens) and is scored on the answer
tokens alone. Two phases: first (``short_steps``) the batch's sequences after their common
prefix alone, a cheap step where what tells the prompts apart is learnt; then (``steps``) the
whole sequences, the common prefix run every :data:`PREFIX_EVERY` steps without gradients and
the batch attending to its keys and values (:class:`FixedPrefix`), so the model learns to
answer behind the prefix it will see.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mlx.core as mx
    import mlx.nn as nn

BATCH = 16
LEARNING_RATE = 3e-3
PREFIX_EVERY = 8  # steps between two runs of the shared prefix


@dataclass(frozen=True)
class Example:
    """One training example: the prompt's tokens and the answer's (ending in end of turn)."""

    prompt: tuple[int, ...]
    answer: tuple[int, ...]
    call: tuple[str, dict[str, str]] = ("", {})  # a caller's: the call the answer makes


@dataclass(frozen=True)
class Fitted:
    """What a training run did: the last step's loss and the seconds it took."""

    final_loss: float
    seconds: float


class FixedPrefix:
    """A stand-in for a layer's KV cache: keys and values of a prefix computed without
    gradients, in front of the batch's own (mlx-lm's attention asks ``offset`` for RoPE,
    ``update_and_fetch`` for the keys and ``make_mask`` for the mask)."""

    def __init__(self, keys: mx.array, values: mx.array) -> None:
        self.keys = keys
        self.values = values
        self.offset = int(keys.shape[2])

    def update_and_fetch(self, keys: mx.array, values: mx.array) -> tuple[mx.array, mx.array]:
        import mlx.core as mx

        return (
            mx.concatenate([self.keys, keys], axis=2),
            mx.concatenate([self.values, values], axis=2),
        )

    def make_mask(
        self, n: int, return_array: bool = False, window_size: int | None = None
    ) -> mx.array:
        import mlx.core as mx

        rows = mx.arange(n)[:, None] + self.offset
        return mx.arange(self.offset + n)[None] <= rows


def answered_tokens(
    tokenizer: Any, prompt_text: str, whole_text: str
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The prompt's tokens and the answer's after them, up to and with the first end of turn
    (one added when the template renders none): what a trained model must say after its
    prompt. None when the answered conversation does not start with the prompt, text or
    tokens (the template renders the turn some other way)."""
    prompt = tokenizer.encode(prompt_text, add_special_tokens=False)
    whole = tokenizer.encode(whole_text, add_special_tokens=False)
    if not whole_text.startswith(prompt_text) or whole[: len(prompt)] != prompt:
        return None
    rest = whole[len(prompt) :]
    ends = [i for i, token in enumerate(rest) if token in set(tokenizer.eos_token_ids)]
    rest = rest[: ends[0] + 1] if ends else [*rest, tokenizer.eos_token_id]
    return tuple(prompt), tuple(rest)


def common_prefix(sequences: Sequence[Sequence[int]]) -> int:
    """How many leading tokens every sequence shares."""
    first = sequences[0]
    n = min(len(s) for s in sequences)
    for i in range(n):
        if any(s[i] != first[i] for s in sequences):
            return i
    return n


def fit(
    model: nn.Module,
    draw: Callable[[random.Random], Example],
    *,
    short_steps: int,
    steps: int,
    seed: int,
    batch: int = BATCH,
    learning_rate: float = LEARNING_RATE,
) -> Fitted:
    """Train ``model`` in place on batches of ``draw(rng)`` (``rng`` seeded with ``seed``):
    ``short_steps`` on the sequences after their common prefix, then ``steps`` behind it."""
    import mlx.core as mx
    import mlx.nn as nn
    import mlx.optimizers as optim
    from mlx_lm.models.cache import make_prompt_cache

    rng = random.Random(seed)
    mx.random.seed(seed)
    optimizer = optim.Adam(learning_rate=learning_rate)

    def loss_fn(
        model: nn.Module, x: mx.array, y: mx.array, weights: mx.array, caches: list[Any]
    ) -> mx.array:
        losses = nn.losses.cross_entropy(model(x, cache=caches), y) * weights
        return losses.sum() / weights.sum()

    step_fn = nn.value_and_grad(model, loss_fn)
    started = time.perf_counter()
    prefix: list[tuple[mx.array, mx.array]] = []
    prefix_len = -1
    loss_value = float("nan")
    for step in range(short_steps + steps):
        examples = [draw(rng) for _ in range(batch)]
        sequences = [(*e.prompt, *e.answer) for e in examples]
        n = min(common_prefix(sequences), min(len(e.prompt) for e in examples)) - 1
        caches: list[Any] | None = None
        if step >= short_steps:  # the whole request: its prefix's keys and values, no gradients
            if (step - short_steps) % PREFIX_EVERY == 0 or n != prefix_len:
                cache = make_prompt_cache(model)
                model(mx.array(sequences[0][:n])[None], cache=cache)
                prefix = [
                    (
                        mx.stop_gradient(c.keys[..., : c.offset, :]),
                        mx.stop_gradient(c.values[..., : c.offset, :]),
                    )
                    for c in cache
                ]
                mx.eval(prefix)
                prefix_len = n
            caches = [
                FixedPrefix(mx.repeat(k, batch, axis=0), mx.repeat(v, batch, axis=0))
                for k, v in prefix
            ]
        width = max(len(s) for s in sequences) - n - 1
        inputs, targets, weights = [], [], []
        for e, sequence in zip(examples, sequences, strict=True):
            rest = list(sequence[n:])
            pad = width - (len(rest) - 1)
            inputs.append(rest[:-1] + [0] * pad)
            targets.append(rest[1:] + [0] * pad)
            asked = len(e.prompt) - n - 1
            weights.append([0.0] * asked + [1.0] * len(e.answer) + [0.0] * pad)
        loss, grads = step_fn(model, mx.array(inputs), mx.array(targets), mx.array(weights), caches)
        optimizer.update(model, grads)
        mx.eval(model.parameters(), optimizer.state)
        loss_value = float(loss.item())
    return Fitted(loss_value, time.perf_counter() - started)
