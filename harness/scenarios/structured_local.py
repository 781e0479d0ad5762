"""``structured_output`` in process: a schema's prompt through the chat template, answered
greedily with the backend's constrained decoding (:class:`ConstrainedDecoding`) and without it
(:meth:`LoadedModel.stream_tokens`, ending at EOS), each token timed."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from harness.backends.base import ConstrainedDecoding
from harness.scenarios.structured_pairs import Answer, decode_rate


def timed(model: ConstrainedDecoding, tokens: Iterator[int], max_tokens: int) -> Answer:
    start = time.perf_counter()
    out: list[int] = []
    stamps: list[float] = []
    for token in tokens:
        stamps.append(time.perf_counter() - start)
        out.append(token)
    return Answer(
        text=model.decode(out),
        tokens=len(out),
        cut=len(out) >= max_tokens,
        ttft_s=stamps[0] if stamps else float("nan"),
        decode_tps=decode_rate(stamps),
    )


def constrained_answer(
    model: ConstrainedDecoding, prompt: Sequence[int], schema: Mapping[str, Any], max_tokens: int
) -> Answer:
    return timed(model, model.stream_constrained(prompt, schema, max_tokens=max_tokens), max_tokens)


def unconstrained_answer(
    model: ConstrainedDecoding, prompt: Sequence[int], max_tokens: int
) -> Answer:
    eos = model.eos_token_ids

    def until_eos() -> Iterator[int]:
        for token in model.stream_tokens(prompt, max_tokens=max_tokens, ignore_eos=False):
            if token in eos:
                return
            yield token

    return timed(model, until_eos(), max_tokens)
