"""The planted server's bugs, and its requests: an OpenAI-compatible body validated into a
:class:`Request`, or :class:`BadRequest` with the message a client gets in a JSON 400."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from tests.servers.toy_model import (
    Sampling,
    chat_in_prompt,
    message_text,
    plan_calls,
    render_chat,
)

DEFAULT_MAX_TOKENS = 64
MAX_STOPS = 4


class Plant(str, Enum):
    """One contract bug the server can carry (``--plant NAME``); none: a clean server."""

    STOP_LEAK_STREAM = "stop_leak_stream"  # streamed: the chunk holding the stop is sent whole
    STOP_LEAK_SPLIT = "stop_leak_split"  # streamed: stops matched within one chunk only
    FINISH_LENGTH_ON_STOP = "finish_length_on_stop"  # finish_reason "length" when a stop hit
    STREAM_TEXT_DIFFERS = "stream_text_differs"  # streamed: the last token of a cut never sent
    USAGE_STREAM_DIFFERS = "usage_stream_differs"  # streamed usage counts one more prompt token
    USAGE_CACHE_DIFFERS = "usage_cache_differs"  # a cache hit reports only the uncached tokens
    NO_CACHED_TOKENS = "no_cached_tokens"  # prompt_tokens_details.cached_tokens always 0
    INVALID_PARAMS_200 = "invalid_params_200"  # bad parameters replaced by defaults, HTTP 200
    INVALID_PARAMS_DROP = "invalid_params_drop"  # bad parameters: connection closed, no answer
    # mlx-lm 0.30.4-0.31.3 (#1257): XTC sampling raises in the sampler; a seeded request's
    # connection is closed with no answer (the batched path's thread dies: every request hangs)
    XTC_DIES = "xtc_dies"
    DISCONNECT_CORRUPTS = "disconnect_corrupts"  # a hung-up stream's tokens leak into the next
    SEED_IGNORED = "seed_ignored"  # sampling never seeded
    TOP_K_IGNORED = "top_k_ignored"
    TEMPERATURE_ZERO_SEEDED = "temperature_zero_seeded"  # temperature 0 with a seed samples
    MAX_TOKENS_OFF_BY_ONE = "max_tokens_off_by_one"  # one token more than max_tokens
    TOP_P_IGNORED = "top_p_ignored"
    MIN_P_IGNORED = "min_p_ignored"
    # mlx-lm 0.31.2-0.31.3 (#1225): a penalized request batched after a plain one is decoded
    # without its penalty (a stale slot of the batch's processor list); a seeded request,
    # served alone, keeps it
    PENALTY_DROPPED_UNSEEDED = "penalty_dropped_unseeded"
    THINK_LEAK = "think_leak"  # streamed: <think>...</think> left in the content
    # chat: the think block's text sent as content (markers dropped, no reasoning field): a
    # reasoning stream counted as answer
    REASONING_AS_CONTENT = "reasoning_as_content"
    # chat: the think block never closed: the answer after </think> sent as reasoning too
    THINK_NEVER_CLOSED = "think_never_closed"
    SHARED_KV_CACHE = "shared_kv_cache"  # concurrent requests share one generator state
    BATCH_LEAVES_KV = "batch_leaves_kv"  # a batch leaves one request's tokens for the next alone
    BATCH_CHECKPOINT_SWAP = "batch_checkpoint_swap"  # a batch caches a new prompt from another
    # mlx-lm 0.31.2 (#1129/#1169): a request that arrives while a long prompt is processed
    # (": keepalive" comments meanwhile) joins its batch and starts from that prompt's state
    JOIN_MID_PROMPT = "join_mid_prompt"
    # mlx-lm 0.31.2 (#1141): two requests that join a prompt in prefill together (a batch of
    # two extending a batch of one); the second starts from that prompt's state. One joiner
    # alone is served right
    JOIN_PAIR_MID_PROMPT = "join_pair_mid_prompt"
    # mlx-lm 0.30.6-0.31.1 (#1072): a request's logprobs formatted with the top_logprobs of the
    # request that started last (blank entries, {}, when that one asked none)
    LOGPROBS_LAST_ARGS = "logprobs_last_args"
    PROMPT_BLIND = "prompt_blind"  # every prompt answered alike: texts compared prove nothing
    TOOL_FINISH_STOP = "tool_finish_stop"  # finish_reason "stop" after tool calls
    TOOL_ARGS_OBJECT = "tool_args_object"  # non-streamed arguments a JSON object, not a string
    TOOL_STREAM_DIFFERS = "tool_stream_differs"  # streamed: each call sent again, new index
    TOOL_MARKUP_LEAK = "tool_markup_leak"  # the raw <tool_call> markup left in the content
    # chat: the model's call dropped (no tool_calls, empty content, finish_reason "stop");
    # /v1/completions still returns the raw markup the same weights generate
    TOOL_CALL_DROPPED = "tool_call_dropped"
    # mlx-lm#1307 (0.31.2-0.31.3): the call dropped in chat AND in /v1/completions (its text
    # empty too): the server says it generated the tokens and returns none of them
    TOOL_CALL_DROPPED_EVERYWHERE = "tool_call_dropped_everywhere"
    # mlx-lm#1738 (0.31.2-0.31.3): a non-streamed chat message with no text (a tool call) has
    # no content key at all ({"role", "tool_calls"}); OpenAI's schema requires it, nullable
    MESSAGE_CONTENT_MISSING = "message_content_missing"
    # mlx-lm#1215: a prompt equal to an earlier request's prompt and answer (an exact cache hit,
    # nothing left to process) kills the generation: that request and every later one fail
    EXACT_HIT_DIES = "exact_hit_dies"
    # a client that hangs up mid-stream does not stop the generation: the server goes on to
    # max_tokens unseen, its slot busy (a server that never checks the connection)
    CANCEL_KEEPS_GENERATING = "cancel_keeps_generating"
    # every request keeps 1 MiB the server never frees (mlx-lm#883, #1666, #1807: servers that
    # grow until the Mac falls over)
    LEAK_PER_REQUEST = "leak_per_request"
    # /v1/responses ignores previous_response_id: a chained turn is answered as if alone
    RESPONSES_DROP_PREVIOUS = "responses_drop_previous"
    # status "completed" at max_output_tokens (llama-server 11434's Responses API)
    RESPONSES_STATUS_COMPLETED = "responses_status_completed"
    RESPONSES_STREAM_DIFFERS = "responses_stream_differs"  # the last delta never sent
    MESSAGES_STOP_END_TURN = "messages_stop_end_turn"  # stop_reason end_turn at max_tokens
    MESSAGES_STREAM_DIFFERS = "messages_stream_differs"  # the last text delta never sent
    EMBEDDINGS_ONE_VECTOR = "embeddings_one_vector"  # every text embedded as the same vector


class BadRequest(Exception):
    """A request the server must refuse with a JSON 4xx; the message is the client's."""


@dataclass(frozen=True)
class Request:
    chat: bool
    prompt: str  # the rendered prompt the tokenizer counts
    user_text: str
    max_tokens: int
    sampling: Sampling
    seed: int | None
    stops: tuple[str, ...]
    stream: bool
    include_usage: bool
    calls: tuple[dict[str, Any], ...]  # the tool calls the toy will make
    think: bool
    xtc_probability: float = 0.0  # read, not applied: the toy has no XTC sampler
    top_logprobs: int | None = None  # chat: alternatives per token asked (None: no logprobs)


def _number(body: Mapping[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = body.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRequest(f"{key} must be a number")
    if not low <= value <= high:
        raise BadRequest(f"{key} must be between {low} and {high}")
    return float(value)


def _integer(body: Mapping[str, Any], key: str, default: int | None, low: int) -> int | None:
    value = body.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"{key} must be an integer")
    if value < low:
        raise BadRequest(f"{key} must be at least {low}")
    return value


def _stops(body: Mapping[str, Any]) -> tuple[str, ...]:
    stop = body.get("stop")
    if stop is None:
        return ()
    stops = [stop] if isinstance(stop, str) else stop
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise BadRequest("stop must be a non-empty string or a list of them")
    if len(stops) > MAX_STOPS:
        raise BadRequest(f"stop takes at most {MAX_STOPS} strings")
    return tuple(stops)


def _messages(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty list")
    if not all(isinstance(m, Mapping) and isinstance(m.get("role"), str) for m in messages):
        raise BadRequest("each message must be an object with a role")
    return messages


def _tools(body: Mapping[str, Any]) -> list[Any]:
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        raise BadRequest("tools must be a list")
    for tool in tools:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise BadRequest("each tool must be {type: function, function: {name, parameters}}")
    return tools


MAX_TOP_LOGPROBS = 20


def _top_logprobs(body: Mapping[str, Any]) -> int | None:
    """A chat request's ``logprobs`` and ``top_logprobs``: the alternatives per token it asks,
    None when it asks no logprobs."""
    logprobs = body.get("logprobs")
    if logprobs is not None and not isinstance(logprobs, bool):
        raise BadRequest("logprobs must be a boolean")
    top = _integer(body, "top_logprobs", None, 0)
    if top is not None and top > MAX_TOP_LOGPROBS:
        raise BadRequest(f"top_logprobs must be at most {MAX_TOP_LOGPROBS}")
    return (top or 0) if logprobs else None


def parse_request(body: Any, *, chat: bool) -> Request:
    """``body`` (parsed JSON) as a request to the chat or the completions endpoint."""
    if not isinstance(body, Mapping):
        raise BadRequest("the request body must be a JSON object")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("stream must be a boolean")
    options = body.get("stream_options") or {}
    if not isinstance(options, Mapping):
        raise BadRequest("stream_options must be an object")
    tools: list[Any] = []
    think = False
    if chat:
        messages = _messages(body)
        tools = _tools(body)
        prompt = render_chat(messages, tools)
        users = [m for m in messages if m.get("role") == "user"]
        user_text = message_text(users[-1].get("content")) if users else ""
        kwargs = body.get("chat_template_kwargs") or {}
        asked = isinstance(kwargs, Mapping) and kwargs.get("enable_thinking") is True
        think = asked or "think" in user_text.lower().split()
    else:
        given = body.get("prompt")
        if not isinstance(given, str):
            raise BadRequest("prompt must be a string")
        prompt = given
        tools, user_text = chat_in_prompt(given)  # a rendered chat: the model calls the same
    max_tokens = _integer(body, "max_completion_tokens", None, 1)
    if max_tokens is None:
        max_tokens = _integer(body, "max_tokens", DEFAULT_MAX_TOKENS, 1)
    sampling = Sampling(
        temperature=_number(body, "temperature", 0.0, 0.0, 2.0),
        top_k=_integer(body, "top_k", 0, 0) or 0,
        top_p=_number(body, "top_p", 1.0, 0.0, 1.0),
        min_p=_number(body, "min_p", 0.0, 0.0, 1.0),
        frequency_penalty=_number(body, "frequency_penalty", 0.0, -2.0, 2.0),
    )
    seed = _integer(body, "seed", None, -(2**63))
    if "model" in body and not isinstance(body["model"], str):
        raise BadRequest("model must be a string")
    calls = tuple(plan_calls(user_text, tools)) if tools else ()
    return Request(
        chat=chat,
        prompt=prompt,
        user_text=user_text,
        max_tokens=max_tokens or DEFAULT_MAX_TOKENS,
        sampling=sampling,
        seed=seed,
        stops=_stops(body),
        stream=stream,
        include_usage=options.get("include_usage") is True,
        calls=calls,
        think=think and not calls,
        xtc_probability=_number(body, "xtc_probability", 0.0, 0.0, 1.0),
        top_logprobs=_top_logprobs(body) if chat else None,
    )


LENIENT_BODY = {"messages": [{"role": "user", "content": "hello"}], "max_tokens": 8}


def lenient_request(body: Any, *, chat: bool) -> Request:
    """What a server without validation makes of a bad body: its defaults (the 200 bug)."""
    stream = body.get("stream") is True if isinstance(body, Mapping) else False
    fallback = dict(LENIENT_BODY) if chat else {"prompt": "hello", "max_tokens": 8}
    return parse_request({**fallback, "stream": stream}, chat=chat)
