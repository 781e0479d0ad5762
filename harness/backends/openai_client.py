"""An OpenAI-compatible HTTP API as the harness speaks it: requests, replies and SSE streams,
kept raw (the contracts judge the JSON itself) and timed per chunk (the throughput counts tokens
per chunk, not chunks).

httpx does HTTP (sync for single requests, async for load), httpx-sse parses the event stream.
Nothing here raises for a misbehaving server: a refused connection, a timeout, a non-JSON body
or a cut stream is a reply with ``error`` set to one line, so a check can judge it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

EXCERPT_CHARS = 400
ENDPOINT_PATHS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}


def generation_body(
    endpoint: str, text: str, *, max_tokens: int, ignore_eos: bool = False
) -> dict[str, Any]:
    """A greedy request for ``text``: the raw prompt (``completions``) or one user turn
    (``chat``); ``ignore_eos`` asks servers that know it (llama-server) to go on past EOS."""
    body: dict[str, Any] = {"max_tokens": max_tokens, "temperature": 0.0}
    if endpoint == "chat":
        body["messages"] = [{"role": "user", "content": text}]
    else:
        body["prompt"] = text
    if ignore_eos:
        body["ignore_eos"] = True
    return body


@dataclass(frozen=True)
class Endpoint:
    """Where a server answers: ``base_url`` without ``/v1`` (``http://127.0.0.1:8080``), the
    API key if it wants one, and the ``model`` name requests carry (None: left out)."""

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    model: str | None = None

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + "/" + path.lstrip("/")

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def body(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``body`` with this endpoint's ``model`` added (unless the body names one)."""
        out = dict(body)
        if self.model is not None and "model" not in out:
            out["model"] = self.model
        return out


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def _choice(body: Any) -> Mapping[str, Any]:
    if isinstance(body, Mapping):
        choices = body.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
            return choices[0]
    return {}


def _part(source: Mapping[str, Any], key: str) -> str:
    value = source.get(key)
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Reply:
    """A non-streamed answer: the HTTP status, the parsed JSON body (None when it is not JSON)
    and an excerpt of the raw text; ``error`` is one line when no answer came."""

    status: int | None
    body: Any
    raw: str
    elapsed_s: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    @property
    def message(self) -> Mapping[str, Any]:
        choice = _choice(self.body)
        message = choice.get("message")
        return message if isinstance(message, Mapping) else {}

    @property
    def content(self) -> str:
        """The generated text: ``message.content`` (chat) or ``text`` (completions)."""
        return _part(self.message, "content") or _part(_choice(self.body), "text")

    @property
    def reasoning(self) -> str:
        return _part(self.message, "reasoning_content") or _part(self.message, "reasoning")

    @property
    def finish_reason(self) -> str | None:
        reason = _choice(self.body).get("finish_reason")
        return reason if isinstance(reason, str) else None

    @property
    def usage(self) -> Mapping[str, Any]:
        usage = self.body.get("usage") if isinstance(self.body, Mapping) else None
        return usage if isinstance(usage, Mapping) else {}

    @property
    def tool_calls(self) -> list[Mapping[str, Any]]:
        calls = self.message.get("tool_calls")
        return [c for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []


@dataclass(frozen=True)
class Chunk:
    """One SSE event of a stream: when it arrived (seconds after the request was sent) and its
    parsed JSON (None when the data was not JSON: a contract failure, kept as ``raw``)."""

    t_s: float
    data: Any
    raw: str

    @property
    def choice(self) -> Mapping[str, Any]:
        return _choice(self.data)

    @property
    def delta(self) -> Mapping[str, Any]:
        delta = self.choice.get("delta")
        return delta if isinstance(delta, Mapping) else {}

    @property
    def text(self) -> str:
        """The content this chunk adds: ``delta.content`` (chat) or ``text`` (completions)."""
        return _part(self.delta, "content") or _part(self.choice, "text")

    @property
    def reasoning(self) -> str:
        return _part(self.delta, "reasoning_content") or _part(self.delta, "reasoning")


@dataclass(frozen=True)
class StreamReply:
    """A streamed answer: every event with its arrival time; ``done`` when ``[DONE]`` came;
    ``error`` one line when the stream could not be read to its end."""

    status: int | None
    chunks: tuple[Chunk, ...]
    elapsed_s: float
    done: bool
    error: str | None = None
    raw: str = ""  # the body, when the server answered with something other than a stream

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    @property
    def content(self) -> str:
        return "".join(c.text for c in self.chunks)

    @property
    def reasoning(self) -> str:
        return "".join(c.reasoning for c in self.chunks)

    @property
    def finish_reason(self) -> str | None:
        reasons = [c.choice.get("finish_reason") for c in self.chunks]
        found = [r for r in reasons if isinstance(r, str)]
        return found[-1] if found else None

    @property
    def usage(self) -> Mapping[str, Any]:
        for chunk in reversed(self.chunks):
            usage = chunk.data.get("usage") if isinstance(chunk.data, Mapping) else None
            if isinstance(usage, Mapping):
                return usage
        return {}

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """``delta.tool_calls`` merged by ``index`` as OpenAI clients merge them: id, type and
        name from the first fragment that has them, ``arguments`` concatenated."""
        merged: dict[int, dict[str, Any]] = {}
        for chunk in self.chunks:
            calls = chunk.delta.get("tool_calls")
            if not isinstance(calls, list):
                continue
            for position, call in enumerate(calls):
                if not isinstance(call, Mapping):
                    continue
                index = call.get("index", position)
                index = index if isinstance(index, int) else position
                slot = merged.setdefault(index, {"function": {"arguments": ""}})
                for key in ("id", "type"):
                    if isinstance(call.get(key), str) and key not in slot:
                        slot[key] = call[key]
                function = call.get("function")
                if isinstance(function, Mapping):
                    if isinstance(function.get("name"), str) and "name" not in slot["function"]:
                        slot["function"]["name"] = function["name"]
                    arguments = function.get("arguments")
                    if isinstance(arguments, str):
                        slot["function"]["arguments"] += arguments
        return [merged[i] for i in sorted(merged)]

    @property
    def content_chunks(self) -> list[Chunk]:
        """The chunks that carry generated text (content or reasoning), in order."""
        return [c for c in self.chunks if c.text or c.reasoning]


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _error_line(exc: BaseException) -> str:
    from harness.exception_line import exception_line

    return exception_line(exc)


def sync_client(timeout_s: float) -> httpx.Client:
    import httpx

    return httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)))


def async_client(timeout_s: float, connections: int) -> httpx.AsyncClient:
    import httpx

    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)), limits=limits
    )


def get(client: httpx.Client, endpoint: Endpoint, path: str) -> Reply:
    start = time.perf_counter()
    try:
        response = client.get(endpoint.url(path), headers=endpoint.headers())
    except Exception as exc:  # httpx.HTTPError and friends: the server's failure, one line
        return Reply(None, None, "", time.perf_counter() - start, _error_line(exc))
    text = response.text
    return Reply(response.status_code, _parse(text), excerpt(text), time.perf_counter() - start)


def post(client: httpx.Client, endpoint: Endpoint, path: str, body: Mapping[str, Any]) -> Reply:
    """POST ``body`` (``stream`` forced off) and read the whole answer."""
    start = time.perf_counter()
    payload = {**endpoint.body(body), "stream": False}
    try:
        response = client.post(endpoint.url(path), json=payload, headers=endpoint.headers())
    except Exception as exc:
        return Reply(None, None, "", time.perf_counter() - start, _error_line(exc))
    text = response.text
    return Reply(response.status_code, _parse(text), excerpt(text), time.perf_counter() - start)


def _stream_payload(endpoint: Endpoint, body: Mapping[str, Any]) -> dict[str, Any]:
    payload = {**endpoint.body(body), "stream": True}
    payload.setdefault("stream_options", {"include_usage": True})
    return payload


def stream(
    client: httpx.Client,
    endpoint: Endpoint,
    path: str,
    body: Mapping[str, Any],
    *,
    stop_after_chunks: int | None = None,
) -> StreamReply:
    """POST ``body`` with ``stream: true`` and read its events as they arrive.

    ``stop_after_chunks``: hang up after that many events (a client that disconnects).
    """
    from httpx_sse import connect_sse

    start = time.perf_counter()
    chunks: list[Chunk] = []
    status: int | None = None
    try:
        with connect_sse(
            client,
            "POST",
            endpoint.url(path),
            json=_stream_payload(endpoint, body),
            headers=endpoint.headers(),
        ) as source:
            status = source.response.status_code
            if not source.response.headers.get("content-type", "").startswith("text/event-stream"):
                raw = source.response.read().decode(errors="replace")
                return StreamReply(
                    status, (), time.perf_counter() - start, False, _not_a_stream(status), raw
                )
            for event in source.iter_sse():
                now = time.perf_counter() - start
                if event.data.strip() == "[DONE]":
                    return StreamReply(status, tuple(chunks), now, True)
                chunks.append(Chunk(now, _parse(event.data), excerpt(event.data)))
                if stop_after_chunks is not None and len(chunks) >= stop_after_chunks:
                    return StreamReply(status, tuple(chunks), now, False, "client hung up")
    except Exception as exc:
        return StreamReply(
            status, tuple(chunks), time.perf_counter() - start, False, _error_line(exc)
        )
    return StreamReply(status, tuple(chunks), time.perf_counter() - start, False)


async def astream(
    client: httpx.AsyncClient, endpoint: Endpoint, path: str, body: Mapping[str, Any]
) -> StreamReply:
    """:func:`stream` for load: many at once on one event loop."""
    from httpx_sse import aconnect_sse

    start = time.perf_counter()
    chunks: list[Chunk] = []
    status: int | None = None
    try:
        async with aconnect_sse(
            client,
            "POST",
            endpoint.url(path),
            json=_stream_payload(endpoint, body),
            headers=endpoint.headers(),
        ) as source:
            status = source.response.status_code
            if not source.response.headers.get("content-type", "").startswith("text/event-stream"):
                raw = (await source.response.aread()).decode(errors="replace")
                return StreamReply(
                    status, (), time.perf_counter() - start, False, _not_a_stream(status), raw
                )
            async for event in source.aiter_sse():
                now = time.perf_counter() - start
                if event.data.strip() == "[DONE]":
                    return StreamReply(status, tuple(chunks), now, True)
                chunks.append(Chunk(now, _parse(event.data), excerpt(event.data)))
    except Exception as exc:
        return StreamReply(
            status, tuple(chunks), time.perf_counter() - start, False, _error_line(exc)
        )
    return StreamReply(status, tuple(chunks), time.perf_counter() - start, False)


def _not_a_stream(status: int | None) -> str:
    return f"HTTP {status}: the server answered without an event stream"


# -- tokens per chunk ----------------------------------------------------------------------


@dataclass(frozen=True)
class TokenArrivals:
    """When each generated token reached the client: ``chunk_tokens[i]`` tokens arrived with
    chunk ``i`` at ``chunk_times_s[i]`` (seconds after the request was sent)."""

    chunk_times_s: tuple[float, ...]
    chunk_tokens: tuple[int, ...]
    counted_by: str  # "tokenizer" or "chunks" (one token a chunk: no tokenizer was available)

    @property
    def tokens(self) -> int:
        return sum(self.chunk_tokens)

    @property
    def ttft_s(self) -> float | None:
        return self.chunk_times_s[0] if self.chunk_times_s else None

    def inter_token_s(self) -> list[float]:
        """Per token after the first chunk: the gap to the previous chunk that carried tokens,
        shared evenly among the tokens of its chunk (k tokens after a gap g give k gaps of g/k);
        a chunk that completes no token (part of a word) starts no gap."""
        gaps: list[float] = []
        last: float | None = None
        for t, k in zip(self.chunk_times_s, self.chunk_tokens, strict=True):
            if k <= 0:
                continue
            if last is not None:
                gaps.extend([(t - last) / k] * k)
            last = t
        return gaps

    def decode_tps(self) -> float | None:
        """Tokens after the first chunk over the time from the first chunk to the last one
        that carried tokens."""
        carrying = [t for t, k in zip(self.chunk_times_s, self.chunk_tokens, strict=True) if k]
        if len(carrying) < 2:
            return None
        span = carrying[-1] - self.chunk_times_s[0]
        after_first = self.tokens - self.chunk_tokens[0]
        return after_first / span if span > 0 and after_first > 0 else None


def token_arrivals(
    chunks: Sequence[Chunk], count_tokens: Callable[[str], int] | None
) -> TokenArrivals:
    """Count the tokens each text chunk carries: the token count of all text so far, less the
    count before it (so a token cut across chunks is not counted twice); without a tokenizer,
    one a chunk (what other serving benchmarks always assume)."""
    times: list[float] = []
    counts: list[int] = []
    text = ""
    before = 0
    for chunk in chunks:
        piece = chunk.text + chunk.reasoning
        if not piece:
            continue
        text += piece
        if count_tokens is None:
            counts.append(1)
        else:
            now = count_tokens(text)
            counts.append(max(now - before, 0))
            before = max(now, before)
        times.append(chunk.t_s)
    return TokenArrivals(
        tuple(times), tuple(counts), "chunks" if count_tokens is None else "tokenizer"
    )
