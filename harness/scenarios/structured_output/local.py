"""``structured_output`` in process: a schema's prompt through the chat template, answered
greedily with the backend's constrained decoding (:class:`ConstrainedDecoding`) and without it
(:meth:`LoadedModel.stream_tokens`, ending at EOS), each token timed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from harness.backends.base import ConstrainedDecoding
from harness.scenarios.structured_output.pairs import Answer
from harness.scenarios.token_timing import stamped


def timed(model: ConstrainedDecoding, tokens: Iterator[int], max_tokens: int) -> Answer:
    run = stamped(tokens)
    return Answer(
        text=model.decode(run.tokens),
        tokens=len(run.tokens),
        cut=len(run.tokens) >= max_tokens,
        ttft_s=run.ttft_s,
        decode_tps=run.decode_tps,
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
