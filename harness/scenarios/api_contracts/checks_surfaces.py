"""Contract checks of the other APIs agents use, beside chat and completions: OpenAI's Responses
API (``/v1/responses``: its answer, its stream, its state by ``previous_response_id``),
Anthropic's Messages API (``/v1/messages``: its answer and its stream of events) and
``/v1/embeddings``.

Each asks the same greedy prompt as the chat reference (one user turn, the checks'
``max_tokens``), so its text must be the chat answer's. A server without the path (HTTP 404) or
one that says it does not serve this model on it (501, or a 400 naming what it does not
support) makes the check not applicable, with the server's words: only an answer that breaks
the contract fails.

These run when a suite names them (``checks: [responses_text, ...]``), in an entry of their
own: a server that has none of these paths answers each with a 404.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.backends.openai_client import excerpt, fetch, sync_client
from harness.scenarios.api_contracts.asking import (
    TEXT_CHARS,
    prompt,
    prompt_independence,
    reference,
)
from harness.scenarios.api_contracts.verdicts import (
    Api,
    CheckContext,
    CheckResult,
    ContractCheck,
    Exchange,
    failed,
    not_applicable,
    passed,
    unjudged,
)
from harness.scenarios.parting import differ_at
from harness.scenarios.prompt_dependence import independence_line

RESPONSES = "/v1/responses"
MESSAGES = "/v1/messages"
EMBEDDINGS = "/v1/embeddings"
REQUEST_CHARS = 600
NOT_SERVED = (404, 405, 501)  # no such path, or "not supported here"


@dataclass(frozen=True)
class Answer:
    """One answer of a surface: status, the JSON body (non-streamed) or the events (streamed),
    and the exchange kept as evidence."""

    status: int | None
    body: Any
    events: tuple[Mapping[str, Any], ...]
    error: str | None
    exchange: Exchange
    out_of_case_time: bool = False  # cut by the case's time limit: not judged

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    @property
    def failure(self) -> str:
        if self.error is not None:
            return self.error
        return f"HTTP {self.status}: {_error_message(self.body)}"


def _error_message(body: Any) -> str:
    if isinstance(body, Mapping):
        error = body.get("error", body.get("detail"))
        if isinstance(error, Mapping):
            error = error.get("message")
        if error is not None:
            return excerpt(str(error), 160)
    return excerpt(json.dumps(body), 160) if body is not None else "no body"


def _events(text: str) -> tuple[Mapping[str, Any], ...]:
    """The JSON ``data:`` payloads of an SSE stream, in order (``[DONE]`` and others left out)."""
    found: list[Mapping[str, Any]] = []
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue
        try:
            data = json.loads(line[5:].strip())
        except json.JSONDecodeError:
            continue
        if isinstance(data, Mapping):
            found.append(data)
    return tuple(found)


def ask_surface(
    ctx: CheckContext, path: str, payload: Mapping[str, Any], *, streamed: bool = False
) -> Answer:
    """POST ``payload`` to ``path`` and read the whole answer: JSON, or the stream's events."""
    body = {**ctx.endpoint.body(payload), "stream": streamed}
    asked = excerpt(f"POST {path} {json.dumps(body, ensure_ascii=False)}", REQUEST_CHARS)
    # a connection of its own: a server that ends a stream of typed events by closing the
    # connection (llama-server 11434's) would otherwise leave a dead one in the checks' pool,
    # and the next request on it fails with no answer
    with sync_client(ctx.limits.timeout_s) as client:
        raw = fetch(client, ctx.endpoint, "POST", path, payload=body, case_end=ctx.case_end)
    text = raw.data.decode("utf-8", errors="replace")
    head = f"HTTP {raw.status}" if raw.status is not None else "no HTTP answer"
    if raw.error is not None:
        exchange = Exchange(asked, f"{head}\n{raw.error}")
        cut = Answer(raw.status, None, (), raw.error, exchange, raw.out_of_case_time)
        ctx.answers.append(cut)
        return cut
    events = _events(text) if streamed and raw.status == 200 else ()
    try:
        parsed = None if events else json.loads(text)
    except json.JSONDecodeError:
        parsed = None
    shown = f"{head}, {len(events)} events" if streamed else head
    exchange = Exchange(asked, f"{shown}\nbody: {excerpt(text, TEXT_CHARS) or '(empty)'}")
    answer = Answer(raw.status, parsed, events, None, exchange)
    ctx.answers.append(answer)
    return answer


def _needs_chat(ctx: CheckContext, name: str) -> CheckResult | None:
    if ctx.api is not Api.CHAT:
        return not_applicable(name, "its text is compared with the chat answer (api: chat)")
    return None


def _absent(name: str, path: str, answer: Answer) -> CheckResult | None:
    """Not applicable when the server does not serve ``path`` (for this model)."""
    if answer.status in NOT_SERVED:
        return not_applicable(
            name, f"the server does not serve {path} ({answer.failure})", (answer.exchange,)
        )
    return None


def _usage(body: Mapping[str, Any]) -> Mapping[str, Any]:
    usage = body.get("usage")
    return usage if isinstance(usage, Mapping) else {}


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# -- Responses ------------------------------------------------------------------------------


def responses_payload(ctx: CheckContext, text: str | Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {"input": text, "max_output_tokens": ctx.limits.max_tokens, "temperature": 0.0}


def response_text(body: Any) -> str | None:
    """The text of a Responses answer: every ``output_text`` part of its message items."""
    if not isinstance(body, Mapping) or not isinstance(body.get("output"), list):
        return None
    parts = [
        part.get("text", "")
        for item in body["output"]
        if isinstance(item, Mapping) and item.get("type") == "message"
        for part in item.get("content") or ()
        if isinstance(part, Mapping) and part.get("type") == "output_text"
    ]
    return "".join(p for p in parts if isinstance(p, str))


def _shape_problem(body: Any, max_tokens: int) -> str | None:
    """What a non-streamed Responses answer lacks, in one line, or None."""
    if not isinstance(body, Mapping) or body.get("object") != "response":
        return 'the answer is not a response object (object: "response")'
    if not isinstance(body.get("id"), str):
        return "the response has no id"
    usage = _usage(body)
    out = _int(usage.get("output_tokens"))
    if out is None or _int(usage.get("input_tokens")) is None:
        return "usage lacks input_tokens or output_tokens"
    status = body.get("status")
    if out >= max_tokens and status == "completed":
        return (
            f"status completed though the answer stopped at max_output_tokens ({out} tokens): "
            'the API says status "incomplete", incomplete_details.reason "max_output_tokens"'
        )
    if status not in ("completed", "incomplete"):
        return f"status {status!r}, neither completed nor incomplete"
    return None


def responses_answer(ctx: CheckContext) -> Answer:
    """The non-streamed Responses answer to the reference prompt, asked once per run."""

    def make() -> Answer:
        return ask_surface(ctx, RESPONSES, responses_payload(ctx, prompt(ctx, "the sea")))

    found: Answer = ctx.once("responses_answer", make)
    return found


def _chat_reference(ctx: CheckContext) -> tuple[str | None, tuple[Exchange, ...]]:
    ref = reference(ctx)
    if ref.error is not None:
        return None, (ref.whole_exchange,)
    return ref.whole.content, (ref.whole_exchange,)


@dataclass(frozen=True)
class Surface:
    """What the two text checks need of a surface: its path, its one answer to the reference
    prompt, what its answer object lacks, and its text."""

    noun: str  # "response", "message": for reasons
    path: str
    answer: Callable[[CheckContext], Answer]
    problem: Callable[[Any, int], str | None]
    text: Callable[[Any], str | None]


def _text_check(ctx: CheckContext, name: str, surface: Surface) -> CheckResult:
    """The surface's answer object is whole and its text is the chat answer's."""
    if (chat_only := _needs_chat(ctx, name)) is not None:
        return chat_only
    answer = surface.answer(ctx)
    if (absent := _absent(name, surface.path, answer)) is not None:
        return absent
    evidence: tuple[Exchange, ...] = (answer.exchange,)
    if not answer.ok:
        return failed(name, f"the request failed: {answer.failure}", evidence)
    problem = surface.problem(answer.body, ctx.limits.max_tokens)
    if problem is not None:
        return failed(name, problem, evidence)
    text = surface.text(answer.body) or ""
    chat, chat_evidence = _chat_reference(ctx)
    evidence += chat_evidence
    if chat is None:
        return unjudged(name, "the chat reference request failed", evidence)
    if text != chat:
        why = f"the {surface.noun}'s text and the chat answer {differ_at(text, chat)}"
        return failed(name, why, evidence)
    if (blind := prompt_independence(ctx)) is not None:
        return unjudged(name, blind, evidence)
    held = f"a {surface.noun} with the chat answer's text ({len(text)} characters)"
    return passed(name, held, evidence)


def check_responses_text(ctx: CheckContext) -> CheckResult:
    surface = Surface("response", RESPONSES, responses_answer, _shape_problem, response_text)
    return _text_check(ctx, "responses_text", surface)


def _stream_text(events: Sequence[Mapping[str, Any]], delta_type: str, key: str) -> str:
    return "".join(
        str(e.get(key) if key != "text_delta" else (e.get("delta") or {}).get("text", ""))
        for e in events
        if e.get("type") == delta_type
    )


def check_responses_stream(ctx: CheckContext) -> CheckResult:
    name = "responses_stream"
    if (chat_only := _needs_chat(ctx, name)) is not None:
        return chat_only
    whole = responses_answer(ctx)
    if (absent := _absent(name, RESPONSES, whole)) is not None:
        return absent
    streamed = ask_surface(
        ctx, RESPONSES, responses_payload(ctx, prompt(ctx, "the sea")), streamed=True
    )
    evidence = (whole.exchange, streamed.exchange)
    if not streamed.ok or not whole.ok:
        bad = streamed if not streamed.ok else whole
        return failed(name, f"the request failed: {bad.failure}", evidence)
    kinds = [str(e.get("type")) for e in streamed.events]
    if not kinds or kinds[0] != "response.created":
        return failed(name, "the stream does not start with response.created", evidence)
    if kinds[-1] not in ("response.completed", "response.incomplete"):
        return failed(name, f"the stream ends with {kinds[-1]!r}, not response.completed", evidence)
    text = _stream_text(streamed.events, "response.output_text.delta", "delta")
    whole_text = response_text(whole.body) or ""
    if text != whole_text:
        return failed(
            name, f"streamed deltas and the whole response {differ_at(text, whole_text)}", evidence
        )
    if (blind := prompt_independence(ctx)) is not None:
        return unjudged(name, blind, evidence)
    return passed(
        name, f"{len(kinds)} events, created to completed, deltas = the whole text", evidence
    )


STATE_FIRST = "My name is Orla and I keep the lighthouse. Say hello to me."
STATE_NEXT = "What is my name, and what do I keep?"


def check_responses_state(ctx: CheckContext) -> CheckResult:
    """A turn sent with ``previous_response_id`` must be answered as the same conversation sent
    whole (the first turn, its answer, the next turn), not as the next turn alone."""
    name = "responses_state"
    if (chat_only := _needs_chat(ctx, name)) is not None:
        return chat_only
    first = ask_surface(ctx, RESPONSES, responses_payload(ctx, f"{STATE_FIRST} ({ctx.nonce})"))
    if (absent := _absent(name, RESPONSES, first)) is not None:
        return absent
    if not first.ok or not isinstance(first.body, Mapping):
        return failed(name, f"the first turn failed: {first.failure}", (first.exchange,))
    chained_payload = {
        **responses_payload(ctx, STATE_NEXT),
        "previous_response_id": first.body.get("id"),
    }
    chained = ask_surface(ctx, RESPONSES, chained_payload)
    evidence: tuple[Exchange, ...] = (first.exchange, chained.exchange)
    if chained.status in (400, 422) and "previous_response_id" in chained.failure:
        return not_applicable(
            name, f"the server refuses previous_response_id ({chained.failure})", evidence
        )
    history = [
        {"role": "user", "content": f"{STATE_FIRST} ({ctx.nonce})"},
        {"role": "assistant", "content": response_text(first.body) or ""},
        {"role": "user", "content": STATE_NEXT},
    ]
    whole = ask_surface(ctx, RESPONSES, responses_payload(ctx, history))
    alone = ask_surface(ctx, RESPONSES, responses_payload(ctx, STATE_NEXT))
    evidence += (whole.exchange, alone.exchange)
    broken = [a for a in (chained, whole, alone) if not a.ok]
    if broken:
        return failed(name, f"a request failed: {broken[0].failure}", evidence)
    chained_text, whole_text, alone_text = (
        response_text(a.body) or "" for a in (chained, whole, alone)
    )
    if whole_text == alone_text:
        seen = (
            "the next turn got the same answer with its history and without it, so a server "
            "that dropped previous_response_id would not show"
        )
        return unjudged(name, independence_line(seen), evidence)
    if chained_text == whole_text:
        return passed(name, "a chained turn is answered as the whole conversation", evidence)
    if chained_text == alone_text:
        return failed(
            name,
            "previous_response_id ignored: the chained turn got the answer of the turn alone, "
            "not of the conversation",
            evidence,
        )
    return failed(
        name,
        f"the chained turn and the whole conversation {differ_at(chained_text, whole_text)}",
        evidence,
    )


# -- Anthropic Messages ---------------------------------------------------------------------


def messages_payload(ctx: CheckContext) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": prompt(ctx, "the sea")}],
        "max_tokens": ctx.limits.max_tokens,
        "temperature": 0.0,
    }


def message_text(body: Any) -> str | None:
    if not isinstance(body, Mapping) or not isinstance(body.get("content"), list):
        return None
    return "".join(
        str(block.get("text", ""))
        for block in body["content"]
        if isinstance(block, Mapping) and block.get("type") == "text"
    )


def messages_answer(ctx: CheckContext) -> Answer:
    def make() -> Answer:
        return ask_surface(ctx, MESSAGES, messages_payload(ctx))

    found: Answer = ctx.once("messages_answer", make)
    return found


def _message_problem(body: Any, max_tokens: int) -> str | None:
    if not isinstance(body, Mapping) or body.get("type") != "message":
        return 'the answer is not a message (type: "message")'
    if body.get("role") != "assistant":
        return f"role {body.get('role')!r}, not assistant"
    usage = _usage(body)
    out = _int(usage.get("output_tokens"))
    if out is None or _int(usage.get("input_tokens")) is None:
        return "usage lacks input_tokens or output_tokens"
    stop = body.get("stop_reason")
    if out >= max_tokens and stop != "max_tokens":
        return f"stop_reason {stop!r} though the answer stopped at max_tokens ({out} tokens)"
    if stop not in ("end_turn", "max_tokens", "stop_sequence", "tool_use"):
        return f"stop_reason {stop!r} is none of the API's"
    return None


def check_messages_text(ctx: CheckContext) -> CheckResult:
    surface = Surface("message", MESSAGES, messages_answer, _message_problem, message_text)
    return _text_check(ctx, "messages_text", surface)


MESSAGE_EVENTS = ("message_start", "content_block_start", "content_block_delta")


def check_messages_stream(ctx: CheckContext) -> CheckResult:
    name = "messages_stream"
    if (chat_only := _needs_chat(ctx, name)) is not None:
        return chat_only
    whole = messages_answer(ctx)
    if (absent := _absent(name, MESSAGES, whole)) is not None:
        return absent
    streamed = ask_surface(ctx, MESSAGES, messages_payload(ctx), streamed=True)
    evidence = (whole.exchange, streamed.exchange)
    if not streamed.ok or not whole.ok:
        bad = streamed if not streamed.ok else whole
        return failed(name, f"the request failed: {bad.failure}", evidence)
    kinds = [str(e.get("type")) for e in streamed.events]
    if not kinds or kinds[0] != "message_start" or kinds[-1] != "message_stop":
        return failed(name, "the stream does not go from message_start to message_stop", evidence)
    missing = [k for k in ("message_delta", *MESSAGE_EVENTS[1:]) if k not in kinds]
    text = _stream_text(streamed.events, "content_block_delta", "text_delta")
    if missing and text:
        return failed(name, f"the stream lacks {', '.join(missing)}", evidence)
    whole_text = message_text(whole.body) or ""
    if text != whole_text:
        return failed(
            name,
            f"streamed text deltas and the whole message {differ_at(text, whole_text)}",
            evidence,
        )
    if (blind := prompt_independence(ctx)) is not None:
        return unjudged(name, blind, evidence)
    return passed(
        name,
        f"{len(kinds)} events, message_start to message_stop, deltas = the whole text",
        evidence,
    )


# -- Embeddings -----------------------------------------------------------------------------

EMBED_TEXTS = ("The sea at night.", "A mountain village in winter.", "The sea at night.")


def _vectors(body: Any) -> list[list[float]] | None:
    data = body.get("data") if isinstance(body, Mapping) else None
    if not isinstance(data, list):
        return None
    vectors: list[list[float]] = []
    for item in sorted(
        (d for d in data if isinstance(d, Mapping)), key=lambda d: _int(d.get("index")) or 0
    ):
        vector = item.get("embedding")
        if not isinstance(vector, list) or not vector:
            return None
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in vector):
            return None
        vectors.append([float(v) for v in vector])
    return vectors


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def check_embeddings(ctx: CheckContext) -> CheckResult:
    """Three inputs, the first repeated last: one finite vector each, of one dimension; the
    repeat the same vector, the other text another."""
    name = "embeddings"
    answer = ask_surface(ctx, EMBEDDINGS, {"input": list(EMBED_TEXTS)})
    if (absent := _absent(name, EMBEDDINGS, answer)) is not None:
        return absent
    evidence: tuple[Exchange, ...] = (answer.exchange,)
    if not answer.ok:
        return failed(name, f"the request failed: {answer.failure}", evidence)
    vectors = _vectors(answer.body)
    if vectors is None or len(vectors) != len(EMBED_TEXTS):
        return failed(name, f"not {len(EMBED_TEXTS)} finite embedding vectors in data", evidence)
    if len({len(v) for v in vectors}) != 1:
        return failed(name, "the vectors have different dimensions", evidence)
    same, other = _cosine(vectors[0], vectors[2]), _cosine(vectors[0], vectors[1])
    if same < 0.999:
        return failed(name, f"one text embedded twice gave cosine {same:.4f}, not 1", evidence)
    if other >= 0.9999:
        return failed(name, "two different texts got the same vector", evidence)
    return passed(
        name,
        f"{len(vectors[0])} dimensions; a repeat the same vector, another text another "
        f"(cosine {other:.3f})",
        evidence,
    )


CHECKS = (
    ContractCheck(
        "responses_text",
        "/v1/responses answers a response object whose text is the chat answer's; status "
        "incomplete at max_output_tokens",
        check_responses_text,
        compares_texts=True,
        named_only=True,
    ),
    ContractCheck(
        "responses_stream",
        "a streamed /v1/responses goes from response.created to response.completed, its "
        "deltas the whole response's text",
        check_responses_stream,
        compares_texts=True,
        named_only=True,
    ),
    ContractCheck(
        "responses_state",
        "a turn with previous_response_id is answered as the whole conversation (or the "
        "server refuses the field)",
        check_responses_state,
        named_only=True,
    ),
    ContractCheck(
        "messages_text",
        "/v1/messages (Anthropic) answers a message whose text is the chat answer's; "
        "stop_reason max_tokens at max_tokens",
        check_messages_text,
        compares_texts=True,
        named_only=True,
    ),
    ContractCheck(
        "messages_stream",
        "a streamed /v1/messages goes from message_start to message_stop, its text deltas "
        "the whole message's text",
        check_messages_stream,
        compares_texts=True,
        named_only=True,
    ),
    ContractCheck(
        "embeddings",
        "/v1/embeddings gives one finite vector per input, of one dimension: a repeat the "
        "same, another text another",
        check_embeddings,
        named_only=True,
    ),
)
