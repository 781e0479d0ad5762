"""``structured_output`` over HTTP: a schema's prompt as one user turn on
``/v1/chat/completions``, greedy and streamed, with ``response_format`` (OpenAI's
``json_schema``, ``strict: true``) and without it; tokens counted per chunk by the model's
tokenizer where there is one (:func:`harness.backends.openai_client.token_arrivals`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from harness.backends.base import Served
from harness.backends.openai_client import ENDPOINT_PATHS, stream, token_arrivals
from harness.scenarios.structured_output.cases import SchemaCase
from harness.scenarios.structured_output.pairs import Answer

if TYPE_CHECKING:
    import httpx

CHAT = ENDPOINT_PATHS["chat"]


def response_format(case: SchemaCase) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": case.name, "schema": case.json_schema, "strict": True},
    }


def request_body(case: SchemaCase, max_tokens: int, *, constrained: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": case.prompt}],
        "max_tokens": max_tokens,
        "temperature": 0.0,
    }
    if constrained:
        body["response_format"] = response_format(case)
    return body


def served_answer(
    client: httpx.Client,
    model: Served,
    case: SchemaCase,
    max_tokens: int,
    *,
    constrained: bool,
    case_end: float | None = None,
) -> Answer:
    """One streamed request; a refused or broken answer is an :class:`Answer` with its status
    and ``failure`` (one line), never an exception."""
    body = request_body(case, max_tokens, constrained=constrained)
    reply = stream(client, model.endpoint, CHAT, body, case_end=case_end)
    if not reply.ok:
        return Answer(
            "", 0, False, math.nan, math.nan, reply.status, reply.failure, reply.out_of_case_time
        )
    arrivals = token_arrivals(reply.chunks, model.token_counter)
    used = reply.usage.get("completion_tokens")
    tokens = used if isinstance(used, int) and used >= 0 else arrivals.tokens
    rate = arrivals.decode_tps()
    return Answer(
        text=reply.content,
        tokens=tokens,
        cut=reply.finish_reason == "length",
        ttft_s=arrivals.ttft_s if arrivals.ttft_s is not None else math.nan,
        decode_tps=rate if rate is not None else math.nan,
        status=reply.status,
    )
