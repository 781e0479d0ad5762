"""The planted server's engine: the toy model run for one request, streamed or not, with its
usage, prompt cache, reasoning split and tool-call parsing, and the one planted bug (if any).

The streamed answer is the non-streamed one computed as the tokens come (the text so far, held
back where it could be the start of a stop string, split into reasoning, content and calls), so
a clean server's two answers agree by construction and each bug is one local change.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from tests.servers.planted_requests import Plant, Request
from tests.servers.toy_model import (
    CALL_END,
    CALL_START,
    KV,
    MODEL_ID,
    THINK_END,
    THINK_START,
    generate,
    piece_text,
    pieces_of,
    state_of,
)

CACHE_ENTRIES = 64
LONG_PROMPT_PIECES = 150  # join_mid_prompt: a prompt this long takes prefill steps
JOIN_WAIT_S = 2.0  # join_mid_prompt: how long a long prompt's prefill waits for a joiner
LEAK_BYTES = 1 << 20  # leak_per_request: what each request keeps
_CALL = re.compile(r"\s*" + re.escape(CALL_START) + r"\s*(.*?)\s*" + re.escape(CALL_END), re.DOTALL)

Send = Callable[[dict[str, Any]], None]  # writes one SSE event; raises OSError on a hang-up


def first_stop(text: str, stops: tuple[str, ...], start: int = 0) -> int | None:
    found = [i for s in stops if (i := text.find(s, start)) >= 0]
    return min(found) if found else None


def holdback(text: str, stops: tuple[str, ...]) -> int:
    """Characters at the end of ``text`` that could begin a stop string (not sent yet)."""
    held = 0
    for stop in stops:
        for k in range(min(len(stop) - 1, len(text)), held, -1):
            if text.endswith(stop[:k]):
                held = k
                break
    return held


@dataclass(frozen=True)
class Visible:
    """What a client sees of the raw text so far."""

    reasoning: str
    content: str
    calls: tuple[dict[str, Any], ...]


def split(raw: str, *, final: bool, think_split: bool = True) -> Visible:
    """Reasoning (``<think>...</think>``), content and complete tool calls of ``raw``; an
    unfinished call is held back until ``final`` (then it stays in the content, as sent)."""
    reasoning, rest = "", raw
    if think_split and raw.startswith(THINK_START):
        inner = raw[len(THINK_START) :]
        reasoning, _, rest = inner.partition(" " + THINK_END)
    calls = []
    for match in _CALL.finditer(rest):
        try:
            calls.append(json.loads(match.group(1)))
        except ValueError:
            continue
    content = _CALL.sub("", rest) if calls else rest
    if not final and CALL_START in content:
        content = content[: content.index(CALL_START)].rstrip()
    return Visible(reasoning, content, tuple(c for c in calls if isinstance(c, dict)))


class GenerationDied(Exception):
    """The planted generation is dead (exact_hit_dies): every request gets a 404, as
    mlx_lm.server 0.32 answers once its generation thread died."""


@dataclass
class Engine:
    """One server's model and state (prompt cache, and what a planted bug keeps)."""

    plant: Plant | None
    tokenizer: Any
    token_delay_s: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    cache: list[tuple[str, ...]] = field(default_factory=list)
    shared_kv: KV = field(default_factory=lambda: KV(b""))
    dirty: list[str] = field(default_factory=list)  # disconnect_corrupts: a hung-up stream's
    requests: int = 0
    in_flight: int = 0
    stale: list[str] = field(default_factory=list)  # batch_leaves_kv: left by a batch
    # batch_checkpoint_swap (mlx-lm 0.31.0): a new prompt that joins a batch has its cache entry
    # written from the batch's last request; asked alone later, it starts from that
    swapped: dict[tuple[str, ...], list[str]] = field(default_factory=dict)
    open_new: list[tuple[str, ...]] = field(default_factory=list)
    # exact_hit_dies: each finished request's prompt and answer, as its cache entry's key
    finished: set[tuple[str, ...]] = field(default_factory=set)
    dead: bool = False
    spin: bool = False  # each token's delay spent computing, not asleep
    decoded: int = 0  # tokens generated so far, every request (llama-server's n_decode_total)
    leaked: list[bytes] = field(default_factory=list)  # leak_per_request: never freed
    # join_mid_prompt: the long prompt in prefill now, and its event set when a request joins
    # (join_pair_mid_prompt: when a second one does; ``joiners`` counts them)
    processing: tuple[list[str], threading.Event] | None = None
    joiners: int = 0
    last_top: int | None = None  # logprobs_last_args: the top_logprobs of the latest request

    def _delay(self) -> None:
        """A token's time: asleep, or computing (``spin``: the CPU busy, as a real engine's)."""
        if not self.spin:
            time.sleep(self.token_delay_s)
            return
        until = time.perf_counter() + self.token_delay_s
        while time.perf_counter() < until:
            pass

    def metrics_text(self) -> str:
        """llama-server's two counters the cancellation scenario reads, Prometheus text."""
        with self.lock:
            processing, decoded = self.in_flight, self.decoded
        return (
            "# TYPE llamacpp:requests_processing gauge\n"
            f"llamacpp:requests_processing {processing}\n"
            "# TYPE llamacpp:n_decode_total counter\n"
            f"llamacpp:n_decode_total {decoded}\n"
        )

    def has(self, plant: Plant) -> bool:
        if plant is Plant.TOOL_CALL_DROPPED:  # dropped everywhere is dropped in chat too
            return self.plant in (plant, Plant.TOOL_CALL_DROPPED_EVERYWHERE)
        return self.plant is plant

    def process_prompt(self, request: Request, keepalive: Callable[[], None]) -> None:
        """join_mid_prompt: a long prompt's prefill, with a keep-alive comment first (as
        mlx_lm.server writes one while it processes a prompt), lasts until another request
        joins it (or ``JOIN_WAIT_S``): the order the bug needs, without a timing race. A prompt
        already cached (asked before) has no prefill to join."""
        if not (self.has(Plant.JOIN_MID_PROMPT) or self.has(Plant.JOIN_PAIR_MID_PROMPT)):
            return
        pieces = pieces_of(self.tokenizer, request.prompt)
        if len(pieces) < LONG_PROMPT_PIECES or tuple(pieces) in self.cache:
            return  # short, or cached: no prefill to join
        joined = threading.Event()
        with self.lock:
            self.processing = (pieces, joined)
            self.joiners = 0
        try:
            keepalive()
            joined.wait(JOIN_WAIT_S)
        finally:
            with self.lock:
                self.processing = None

    # -- one request -----------------------------------------------------------------------

    def _prepare(self, request: Request) -> tuple[list[str], int, KV, random.Random, Any]:
        pieces = pieces_of(self.tokenizer, request.prompt)
        with self.lock:
            self.requests += 1
            self.last_top = request.top_logprobs
            if self.has(Plant.LEAK_PER_REQUEST):
                self.leaked.append(b"\x01" * LEAK_BYTES)  # written, so resident
            key = tuple(pieces)
            if self.has(Plant.EXACT_HIT_DIES) and key in self.finished:
                self.dead = True
            if self.dead:
                raise GenerationDied("generation thread died")
            common = max((_common(key, old) for old in self.cache), default=0)
            cached = min(common, max(len(key) - 1, 0))
            own = pieces
            if self.has(Plant.BATCH_CHECKPOINT_SWAP):
                own = self._checkpoint_swap(key, pieces)
            if self.processing is not None:  # join_mid_prompt: from the prompt in prefill
                self.joiners += 1
                if self.has(Plant.JOIN_MID_PROMPT) or self.joiners >= 2:
                    own = [*self.processing[0], *pieces]
                    self.processing[1].set()
            if key in self.cache:
                self.cache.remove(key)
            self.cache = [*self.cache, key][-CACHE_ENTRIES:]
            dirty, self.dirty = self.dirty, []
            if self.has(Plant.BATCH_LEAVES_KV) and self.in_flight == 0 and self.stale:
                dirty, self.stale = [*dirty, *self.stale], []
            self.in_flight += 1
            start = state_of(dirty if self.has(Plant.PROMPT_BLIND) else [*dirty, *own])
            if self.has(Plant.SHARED_KV_CACHE):
                self.shared_kv.state = start
                kv = self.shared_kv
            else:
                kv = KV(start)
        sampling = request.sampling
        zero_seeded = sampling.temperature == 0 and request.seed is not None
        if self.has(Plant.TEMPERATURE_ZERO_SEEDED) and zero_seeded:
            sampling = replace(sampling, temperature=1.0)
        if self.has(Plant.TOP_K_IGNORED):
            sampling = replace(sampling, top_k=0)
        if self.has(Plant.TOP_P_IGNORED):
            sampling = replace(sampling, top_p=1.0)
        if self.has(Plant.MIN_P_IGNORED):
            sampling = replace(sampling, min_p=0.0)
        if self.has(Plant.PENALTY_DROPPED_UNSEEDED) and request.seed is None:
            sampling = replace(sampling, frequency_penalty=0.0)
        seeded = request.seed is not None and not self.has(Plant.SEED_IGNORED)
        rng = random.Random(request.seed) if seeded else random.Random()
        return pieces, cached, kv, rng, sampling

    def _checkpoint_swap(self, key: tuple[str, ...], pieces: list[str]) -> list[str]:
        """The pieces the request starts from (under the lock): alone, a swapped entry's."""
        if self.in_flight == 0:
            return self.swapped.get(key, pieces)
        for other in self.open_new:
            self.swapped[other] = pieces  # the batch's last request, for every new prompt in it
        if key not in self.cache:
            self.open_new.append(key)
        return pieces

    def _tokens(self, request: Request) -> tuple[int, int, Iterator[tuple[int, str]]]:
        pieces, cached, kv, rng, sampling = self._prepare(request)
        limit = request.max_tokens + (1 if self.has(Plant.MAX_TOKENS_OFF_BY_ONE) else 0)
        calls = request.calls
        source = generate(kv, sampling, rng, think=request.think and request.chat, calls=calls)

        def tokens() -> Iterator[tuple[int, str]]:
            produced: list[str] = []
            try:
                for position, piece in enumerate(source):
                    if position >= limit:
                        return
                    if self.token_delay_s > 0:
                        self._delay()
                    produced.append(piece)
                    with self.lock:
                        self.decoded += 1
                    yield position, piece
            finally:
                with self.lock:
                    self.in_flight -= 1
                    if tuple(pieces) in self.open_new:
                        self.open_new.remove(tuple(pieces))
                    if self.has(Plant.BATCH_LEAVES_KV) and self.in_flight > 0:
                        self.stale = produced  # finished while others run: left in the batch
                    self.finished.add((*pieces, *produced))

        return len(pieces), cached, tokens()

    def usage(self, prompt: int, cached: int, completion: int, *, stream: bool) -> dict[str, Any]:
        if self.has(Plant.USAGE_CACHE_DIFFERS):
            prompt -= cached
        if self.has(Plant.USAGE_STREAM_DIFFERS) and stream:
            prompt += 1
        reported = 0 if self.has(Plant.NO_CACHED_TOKENS) else cached
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": reported},
        }

    def _finish(self, stopped: bool, ended: bool, calls: bool) -> str:
        if stopped:
            return "length" if self.has(Plant.FINISH_LENGTH_ON_STOP) else "stop"
        if calls:
            return "stop" if self.has(Plant.TOOL_FINISH_STOP) else "tool_calls"
        return "stop" if ended else "length"

    def _tool_calls(
        self, calls: tuple[dict[str, Any], ...], first: int, *, as_object: bool = False
    ) -> list[dict[str, Any]]:
        return [
            {
                "id": f"call_{first + k}",
                "type": "function",
                "function": {
                    "name": call.get("name"),
                    "arguments": call.get("arguments")
                    if as_object
                    else json.dumps(call.get("arguments")),
                },
            }
            for k, call in enumerate(calls)
        ]

    def complete(self, request: Request) -> dict[str, Any]:
        """The non-streamed answer."""
        prompt, cached, tokens = self._tokens(request)
        raw, count, stopped = "", 0, False
        texts: list[str] = []
        for position, piece in tokens:
            count += 1
            texts.append(piece_text(position, piece))
            raw += texts[-1]
            hit = first_stop(raw, request.stops)
            if hit is not None:
                raw, stopped = raw[:hit], True
                break
        ended = not stopped and count < request.max_tokens
        usage = self.usage(prompt, cached, count, stream=False)
        ident = f"cmpl-{self.requests}"
        if not request.chat:
            if self.has(Plant.TOOL_CALL_DROPPED_EVERYWHERE) and split(raw, final=True).calls:
                raw = ""
            choice = {"index": 0, "text": raw, "finish_reason": self._finish(stopped, ended, False)}
            return _envelope(ident, "text_completion", choice, usage)
        seen = self._reasoning_plants(split(raw, final=True))
        if self.has(Plant.TOOL_CALL_DROPPED) and seen.calls:
            seen = replace(seen, calls=(), content="")
        message: dict[str, Any] = {"role": "assistant", "content": seen.content}
        if seen.reasoning:
            message["reasoning_content"] = seen.reasoning
        if seen.calls:
            as_object = self.has(Plant.TOOL_ARGS_OBJECT)
            message["tool_calls"] = self._tool_calls(seen.calls, 0, as_object=as_object)
            message["content"] = raw.strip() if self.has(Plant.TOOL_MARKUP_LEAK) else None
        if self.has(Plant.MESSAGE_CONTENT_MISSING) and not message["content"]:
            del message["content"]  # mlx-lm 0.31.2-0.31.3 (#1738): content only with text
        finish = self._finish(stopped, ended, bool(seen.calls))
        choice = {"index": 0, "message": message, "finish_reason": finish}
        if request.top_logprobs is not None:
            with self.lock:
                top = self.last_top if self.has(Plant.LOGPROBS_LAST_ARGS) else request.top_logprobs
            choice["logprobs"] = {"content": [_logprob_entry(t, top) for t in texts]}
        return _envelope(ident, "chat.completion", choice, usage)

    def stream(self, request: Request, send: Send) -> None:
        """The streamed answer, one event per chunk of one or two tokens (and the role, the
        tool-call fragments, the finish and the usage events)."""
        prompt, cached, tokens = self._tokens(request)
        ident = f"cmpl-{self.requests}"
        kind = "chat.completion.chunk" if request.chat else "text_completion"
        state = _StreamState()

        def event(delta: dict[str, Any] | None, finish: str | None = None) -> None:
            if request.chat:
                choice: dict[str, Any] = {"index": 0, "delta": delta or {}}
            else:
                choice = {"index": 0, "text": (delta or {}).get("content", "")}
            choice["finish_reason"] = finish
            send(_envelope(ident, kind, choice, None))

        if request.chat:
            event({"role": "assistant", "content": ""})
        raw, count, stopped, generated = "", 0, False, []
        try:
            for position, piece in tokens:
                count += 1
                generated.append(piece)
                before = raw
                raw += piece_text(position, piece)
                safe, stopped = self._safe(raw, before, state.chunk_start, request)
                last = position == request.max_tokens - 1 and not stopped
                if last and self.has(Plant.STREAM_TEXT_DIFFERS):
                    safe = safe[: len(before)]
                if stopped or position % 3 != 1:
                    self._flush(state, safe, request, event, final=stopped)
                    state.chunk_start = len(raw)
                if stopped:
                    break
            else:
                cut = count >= request.max_tokens
                if not (cut and self.has(Plant.STREAM_TEXT_DIFFERS)):
                    self._flush(state, raw, request, event, final=True)
        except OSError:
            if self.has(Plant.CANCEL_KEEPS_GENERATING):
                for _ in tokens:  # on to max_tokens, for nobody
                    pass
            if self.has(Plant.DISCONNECT_CORRUPTS):
                with self.lock:
                    self.dirty = generated
            raise
        ended = not stopped and count < request.max_tokens
        event({}, self._finish(stopped, ended, bool(state.calls)))
        if request.include_usage:
            usage = self.usage(prompt, cached, count, stream=True)
            send({"id": ident, "object": kind, "model": MODEL_ID, "choices": [], "usage": usage})

    def _safe(self, raw: str, before: str, chunk_start: int, request: Request) -> tuple[str, bool]:
        """The part of ``raw`` that may be sent, and whether a stop string was hit."""
        stops = request.stops
        if self.has(Plant.STOP_LEAK_SPLIT):
            hit = first_stop(raw, stops, chunk_start)  # only inside the chunk being built
            return (raw, False) if hit is None else (raw[:hit], True)
        hit = first_stop(raw, stops)
        if hit is not None:
            return (raw if self.has(Plant.STOP_LEAK_STREAM) else raw[:hit]), True
        return raw[: len(raw) - holdback(raw, stops)], False

    def _flush(
        self,
        state: _StreamState,
        safe: str,
        request: Request,
        event: Callable[..., None],
        *,
        final: bool,
    ) -> None:
        if not request.chat:
            if self.has(Plant.TOOL_CALL_DROPPED_EVERYWHERE) and split(safe, final=final).calls:
                return
            if len(safe) > len(state.content):
                event({"content": safe[len(state.content) :]})
                state.content = safe
            return
        seen = self._reasoning_plants(
            split(safe, final=final, think_split=not self.has(Plant.THINK_LEAK))
        )
        if self.has(Plant.TOOL_CALL_DROPPED) and seen.calls:
            seen = replace(seen, calls=(), content="")
        if len(seen.reasoning) > len(state.reasoning):
            event({"reasoning_content": seen.reasoning[len(state.reasoning) :]})
            state.reasoning = seen.reasoning
        content = seen.content
        if self.has(Plant.TOOL_MARKUP_LEAK) and seen.calls:
            content = safe.strip()
        if len(content) > len(state.content):
            event({"content": content[len(state.content) :]})
            state.content = content
        for index in range(len(state.calls), len(seen.calls)):
            call = seen.calls[index]
            self._send_call(call, index, event)
            state.calls.append(call)
            if self.has(Plant.TOOL_STREAM_DIFFERS):  # the whole call again, as a new one
                self._send_call(call, len(seen.calls) + index, event)

    def _reasoning_plants(self, seen: Visible) -> Visible:
        """The reasoning as content (reasoning_as_content), or the answer as reasoning
        (think_never_closed); both keep each part growing, so a stream stays a prefix."""
        if self.has(Plant.REASONING_AS_CONTENT) and seen.reasoning:
            return replace(seen, reasoning="", content=seen.reasoning + seen.content)
        if self.has(Plant.THINK_NEVER_CLOSED) and seen.reasoning:
            return replace(seen, reasoning=seen.reasoning + seen.content, content="")
        return seen

    def _send_call(self, call: dict[str, Any], index: int, event: Callable[..., None]) -> None:
        (whole,) = self._tool_calls((call,), index)
        arguments = whole["function"]["arguments"]
        head = {**whole, "index": index, "function": {"name": call.get("name"), "arguments": ""}}
        event({"tool_calls": [head]})
        half = len(arguments) // 2
        for part in (arguments[:half], arguments[half:]):
            event({"tool_calls": [{"index": index, "function": {"arguments": part}}]})


def _logprob_entry(text: str, top: int | None) -> dict[str, Any]:
    """One token's ``logprobs.content`` entry with ``top`` alternatives (the token first); None:
    blank, as mlx-lm 0.30.6-0.31.1 format a count of -1."""
    if top is None:
        return {}
    alternatives = [{"token": text, "logprob": -0.25}]
    alternatives += [{"token": f" alt{k}", "logprob": -2.0 - k} for k in range(1, top)]
    token = {"token": text, "logprob": -0.25, "bytes": list(text.encode())}
    return {**token, "top_logprobs": alternatives[:top]}


@dataclass
class _StreamState:
    reasoning: str = ""
    content: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    chunk_start: int = 0


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _envelope(
    ident: str, kind: str, choice: dict[str, Any], usage: dict[str, Any] | None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": ident,
        "object": kind,
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [choice],
    }
    if usage is not None:
        body["usage"] = usage
    return body
