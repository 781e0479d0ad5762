"""The planted server's other surfaces: OpenAI's Responses API (``/v1/responses``, stateful by
``previous_response_id``) and Anthropic's Messages API (``/v1/messages``), each translated to a
chat request of the same engine, so their text is the chat answer's; and ``/v1/embeddings`` (a
vector of the text's character counts). Streamed as each API streams (typed events),
non-streamed as its object. Each has plants that break one contract: ``responses_drop_previous``
ignores ``previous_response_id`` (a turn answered as if alone), and so on."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.servers.planted_engine import Engine
from tests.servers.planted_requests import BadRequest, Plant, parse_request

Send = Callable[[dict[str, Any]], None]
DELTAS = 3  # a streamed answer comes in this many pieces


@dataclass
class ResponseStore:
    """Each response's conversation (its messages and answer), by id; shared by the threads."""

    conversations: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, messages: list[dict[str, str]]) -> str:
        with self.lock:
            ident = f"resp_{len(self.conversations) + 1}"
            self.conversations[ident] = messages
            return ident

    def get(self, ident: str) -> list[dict[str, str]] | None:
        with self.lock:
            return self.conversations.get(ident)


def _messages(given: Any) -> list[dict[str, str]]:
    if isinstance(given, str):
        return [{"role": "user", "content": given}]
    if isinstance(given, list) and all(isinstance(m, Mapping) for m in given):
        return [{"role": str(m.get("role")), "content": str(m.get("content", ""))} for m in given]
    raise BadRequest("input must be a string or a list of messages")


def _chat(
    engine: Engine, messages: list[dict[str, str]], max_tokens: Any
) -> tuple[str, str, dict[str, Any]]:
    body = {"messages": messages, "max_tokens": max_tokens, "temperature": 0.0}
    answer = engine.complete(parse_request(body, chat=True))
    choice = answer["choices"][0]
    return (
        str(choice["message"].get("content") or ""),
        str(choice["finish_reason"]),
        answer["usage"],
    )


def _pieces(text: str) -> list[str]:
    step = max(len(text) // DELTAS, 1)
    return [text[i : i + step] for i in range(0, len(text), step)] or [""]


def responses(engine: Engine, store: ResponseStore, body: Mapping[str, Any]) -> dict[str, Any]:
    """The response object, its conversation stored under its id."""
    messages = _messages(body.get("input"))
    previous = body.get("previous_response_id")
    if isinstance(previous, str) and not engine.has(Plant.RESPONSES_DROP_PREVIOUS):
        earlier = store.get(previous)
        if earlier is None:
            raise BadRequest(f"no response {previous}")
        messages = [*earlier, *messages]
    text, finish, usage = _chat(engine, messages, body.get("max_output_tokens", 64))
    ident = store.add([*messages, {"role": "assistant", "content": text}])
    cut = finish == "length" and not engine.has(Plant.RESPONSES_STATUS_COMPLETED)
    return {
        "id": ident,
        "object": "response",
        "status": "incomplete" if cut else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        ],
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "output_tokens": usage["completion_tokens"],
        },
    }


def stream_responses(engine: Engine, response: dict[str, Any], send: Send) -> None:
    send(
        {
            "type": "response.created",
            "response": {**response, "output": [], "status": "in_progress"},
        }
    )
    text = response["output"][0]["content"][0]["text"]
    pieces = _pieces(text)
    if engine.has(Plant.RESPONSES_STREAM_DIFFERS):
        pieces = pieces[:-1]
    for piece in pieces:
        send({"type": "response.output_text.delta", "delta": piece})
    send({"type": "response.output_text.done", "text": text})
    done = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    send({"type": done, "response": response})


def messages(engine: Engine, body: Mapping[str, Any]) -> dict[str, Any]:
    given = body.get("messages")
    if not isinstance(given, list):
        raise BadRequest("messages must be a list")
    text, finish, usage = _chat(engine, _messages(given), body.get("max_tokens", 64))
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stop_reason": (
            "max_tokens"
            if finish == "length" and not engine.has(Plant.MESSAGES_STOP_END_TURN)
            else "end_turn"
        ),
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "output_tokens": usage["completion_tokens"],
        },
    }


def stream_messages(engine: Engine, message: dict[str, Any], send: Send) -> None:
    send({"type": "message_start", "message": {**message, "content": [], "stop_reason": None}})
    send({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    pieces = _pieces(message["content"][0]["text"])
    if engine.has(Plant.MESSAGES_STREAM_DIFFERS):
        pieces = pieces[:-1]
    for piece in pieces:
        send(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": piece},
            }
        )
    send({"type": "content_block_stop", "index": 0})
    delta = {"stop_reason": message["stop_reason"]}
    send({"type": "message_delta", "delta": delta, "usage": message["usage"]})
    send({"type": "message_stop"})


def embeddings(engine: Engine, body: Mapping[str, Any]) -> dict[str, Any]:
    """One vector per input: the counts of each letter a-z and of the rest (a toy, but a text
    embeds as itself and another text as another)."""
    given = body.get("input")
    texts = [given] if isinstance(given, str) else given
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise BadRequest("input must be a string or a list of strings")

    def vector(text: str) -> list[float]:
        if engine.has(Plant.EMBEDDINGS_ONE_VECTOR):
            text = "the same"
        low = text.lower()
        return [float(low.count(c)) + 1.0 for c in "abcdefghijklmnopqrstuvwxyz"]

    data = [
        {"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(texts)
    ]
    return {"object": "list", "data": data, "usage": {"prompt_tokens": 0, "total_tokens": 0}}
