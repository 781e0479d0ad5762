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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.backends.answer_guard import (
    MAX_ANSWER_BYTES,
    AnswerStopped,
    BodyReader,
    Deadline,
    EventReader,
    completion_problem,
    event_problem,
    server_message,
    shown,
    transport_line,
)

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
    path: str = ""  # what was asked: "POST /v1/chat/completions"
    location: str | None = None  # where a redirect pointed
    out_of_case_time: bool = False  # stopped because the case's time limit came first

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    @property
    def failure(self) -> str | None:
        """Why this is not a good answer, one line naming the cause (None: it is one)."""
        return failure_line(self.status, self.error, self.body, self.raw, self.path, self.location)

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
    path: str = ""  # what was asked: "POST /v1/chat/completions"
    location: str | None = None  # where a redirect pointed
    out_of_case_time: bool = False  # stopped because the case's time limit came first
    hung_up: bool = False  # the client left on purpose (``stop_after_chunks``)

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    @property
    def failure(self) -> str | None:
        """Why this is not a good answer, one line naming the cause (None: it is one)."""
        body = _parse(self.raw) if self.raw else None
        return failure_line(self.status, self.error, body, self.raw, self.path, self.location)

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
    def timings(self) -> Mapping[str, Any]:
        """The server's own timing of this request, as it sent it: llama-server puts a
        ``timings`` object in its last chunk (``prompt_n``, ``prompt_ms``,
        ``prompt_per_second``, ``predicted_n``, ``predicted_ms``, ``predicted_per_second``,
        ``cache_n``); empty when the server sent none."""
        for chunk in reversed(self.chunks):
            timings = chunk.data.get("timings") if isinstance(chunk.data, Mapping) else None
            if isinstance(timings, Mapping):
                return timings
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


def failure_line(
    status: int | None,
    error: str | None,
    body: Any,
    raw: str,
    path: str = "",
    location: str | None = None,
) -> str | None:
    """Why an answer is not a good one, in one line naming the cause: the client's error (a
    timeout, a cut or unreadable answer), a redirect and its target, or the status with the
    server's own message. None for a 2xx answer read whole."""
    at = f" at {path}" if path else ""
    if error is not None:
        return error
    if status is None:
        return f"no HTTP answer{at}"
    if 300 <= status < 400:
        target = shown(location) if location else "(no Location header)"
        return (
            f"HTTP {status}{at} redirects to {target}: the harness does not follow "
            "redirects; name the final address in url:"
        )
    if not 200 <= status < 300:
        return f"HTTP {status}{at}: {server_message(body, raw)}"
    return None


def request_failure(reply: Reply | StreamReply, endpoint: str | None = None) -> str:
    """Why a generation request gave nothing to measure, in one line: its failure, or no
    generated text; a 404 on one of the two endpoints names the scenario parameter to change."""
    why = reply.failure or "no generated text in the answer"
    if reply.status == 404 and endpoint in ENDPOINT_PATHS:
        other = "chat" if endpoint == "completions" else "completions"
        why += (
            f"; the server has no {ENDPOINT_PATHS[endpoint]}: set the scenario's "
            f"params: {{endpoint: {other}}}"
        )
    return why


def sync_client(timeout_s: float) -> httpx.Client:
    """A client whose requests each get ``timeout_s`` for their whole answer."""
    import httpx

    return httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)))


def async_client(timeout_s: float, connections: int) -> httpx.AsyncClient:
    import httpx

    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)), limits=limits
    )


def _deadline(client: httpx.Client | httpx.AsyncClient, case_end: float | None) -> Deadline:
    """The request's whole-answer budget: the client's timeout, or less when the case ends
    (``case_end``, a ``time.monotonic()`` value) sooner."""
    return Deadline.starting_now(client.timeout.read or 600.0, case_end)


def _timeout(deadline: Deadline) -> httpx.Timeout:
    """httpx's per-operation limits, each no longer than what is left of the deadline."""
    import httpx

    left = max(deadline.left_s(), 0.001)
    return httpx.Timeout(left, connect=min(left, 10.0))


def _decoded(data: bytes, status: int) -> tuple[str, str | None]:
    """The body as text, and the problem when it is not valid UTF-8."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        problem = (
            f"HTTP {status}: the body is not valid UTF-8 (byte {data[exc.start]:#04x} at "
            f"{exc.start})"
        )
        return data.decode("utf-8", errors="replace"), problem


@dataclass(frozen=True)
class RawAnswer:
    """An answer's bytes, read whole within the deadline and the size cap; ``error`` is one
    line naming why it could not be (then ``data`` is empty)."""

    status: int | None
    data: bytes
    content_type: str
    location: str | None
    elapsed_s: float
    error: str | None = None
    out_of_case_time: bool = False


def fetch(
    client: httpx.Client,
    endpoint: Endpoint,
    method: str,
    path: str,
    *,
    payload: Mapping[str, Any] | None = None,
    content: bytes | None = None,
    form: Mapping[str, str] | None = None,
    files: Mapping[str, tuple[str, bytes, str]] | None = None,
    case_end: float | None = None,
    cap_bytes: int = MAX_ANSWER_BYTES,
) -> RawAnswer:
    """One request (``payload`` as JSON, ``content`` as it is, or a ``form`` with ``files``),
    its answer read whole within the request's deadline and ``cap_bytes``."""
    deadline = _deadline(client, case_end)
    reader = BodyReader(deadline, cap_bytes)
    status: int | None = None
    content_type, location = "", None
    headers = endpoint.headers()
    if content is not None:
        headers["Content-Type"] = "application/json"
    try:
        with client.stream(
            method,
            endpoint.url(path),
            json=payload,
            content=content,
            data=form,
            files=files,
            headers=headers,
            timeout=_timeout(deadline),
        ) as response:
            status = response.status_code
            content_type = response.headers.get("content-type", "")
            location = response.headers.get("location")
            for piece in response.iter_bytes():
                reader.take(piece)
    except AnswerStopped as exc:
        error = str(exc)
    except Exception as exc:  # httpx.HTTPError and friends: the server's failure, one line
        error = transport_line(exc, deadline, reader.progress())
    else:
        elapsed = time.perf_counter() - deadline.start
        return RawAnswer(status, reader.body(), content_type, location, elapsed)
    elapsed = time.perf_counter() - deadline.start
    return RawAnswer(status, b"", content_type, location, elapsed, error, _cut_by_case(deadline))


def _exchange(
    client: httpx.Client,
    method: str,
    endpoint: Endpoint,
    path: str,
    payload: Mapping[str, Any] | None,
    *,
    completion: bool,
    case_end: float | None,
    content: bytes | None = None,
) -> Reply:
    """One request and its answer as a :class:`Reply` (a 2xx that is not a completion's JSON
    is an error when ``completion``)."""
    asked = f"{method} {path}"
    raw = fetch(client, endpoint, method, path, payload=payload, content=content, case_end=case_end)
    if raw.error is not None:
        return Reply(
            raw.status,
            None,
            "",
            raw.elapsed_s,
            raw.error,
            asked,
            raw.location,
            raw.out_of_case_time,
        )
    assert raw.status is not None
    text, error = _decoded(raw.data, raw.status)
    body = _parse(text)
    if error is None and completion and 200 <= raw.status < 300:
        error = completion_problem(raw.status, raw.content_type, body, text)
    return Reply(raw.status, body, excerpt(text), raw.elapsed_s, error, asked, raw.location)


def _cut_by_case(deadline: Deadline) -> bool:
    return deadline.by_case and deadline.left_s() <= 0.05 * deadline.seconds + 0.01


def get(
    client: httpx.Client, endpoint: Endpoint, path: str, *, case_end: float | None = None
) -> Reply:
    """GET ``path`` and read the whole answer (any JSON: ``/v1/models``, ``/health``)."""
    return _exchange(client, "GET", endpoint, path, None, completion=False, case_end=case_end)


def post(
    client: httpx.Client,
    endpoint: Endpoint,
    path: str,
    body: Mapping[str, Any],
    *,
    case_end: float | None = None,
) -> Reply:
    """POST a completion request ``body`` (``stream`` forced off) and read the whole answer:
    a 2xx answer that is not a completion's JSON is an error quoting what came instead."""
    payload = {**endpoint.body(body), "stream": False}
    return _exchange(client, "POST", endpoint, path, payload, completion=True, case_end=case_end)


def post_bytes(
    client: httpx.Client,
    endpoint: Endpoint,
    path: str,
    content: bytes,
    *,
    case_end: float | None = None,
) -> Reply:
    """POST ``content`` as it is (a body that is not valid JSON, to see it refused)."""
    return _exchange(
        client, "POST", endpoint, path, None, completion=True, case_end=case_end, content=content
    )


def _stream_payload(endpoint: Endpoint, body: Mapping[str, Any]) -> dict[str, Any]:
    payload = {**endpoint.body(body), "stream": True}
    payload.setdefault("stream_options", {"include_usage": True})
    return payload


def _stream_headers(endpoint: Endpoint) -> dict[str, str]:
    return {**endpoint.headers(), "Accept": "text/event-stream", "Cache-Control": "no-store"}


class _Events:
    """One streamed request as it is read, the same for :func:`stream` and :func:`astream`:
    the request's arguments, the answer's head (:meth:`begin`), each piece of its body
    (:meth:`feed`: events, or a whole body when the server sent no event stream) and how it
    ended (:meth:`end`, :meth:`reply`)."""

    def __init__(
        self,
        client: httpx.Client | httpx.AsyncClient,
        path: str,
        stop_after: int | None,
        case_end: float | None,
    ) -> None:
        self.deadline = _deadline(client, case_end)
        self.path = path
        self.stop_after = stop_after
        self.reader = EventReader(self.deadline)
        self.chunks: list[Chunk] = []
        self.done = False
        self.hung_up = False
        self.problem: str | None = None
        self.status: int | None = None
        self.location: str | None = None
        self.content_type = ""
        self.whole: BodyReader | None = None  # the body, when it is no event stream

    def request(self, endpoint: Endpoint, body: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments of ``client.stream`` for this request."""
        return {
            "method": "POST",
            "url": endpoint.url(self.path),
            "json": _stream_payload(endpoint, body),
            "headers": _stream_headers(endpoint),
            "timeout": _timeout(self.deadline),
        }

    def begin(self, response: httpx.Response) -> None:
        """Take the answer's head: status, redirect target, and whether it is a stream."""
        self.status = response.status_code
        self.location = response.headers.get("location")
        self.content_type = response.headers.get("content-type", "")
        if not _is_stream(self.status, self.content_type):
            self.whole = BodyReader(self.deadline)

    def feed(self, piece: bytes) -> bool:
        """Take a piece of the body; True when reading should stop."""
        if self.whole is not None:
            self.whole.take(piece)
            return False
        return any(self._event(data) for data in self.reader.feed(piece))

    def end(self) -> StreamReply:
        """The answer once the body ended."""
        if self.whole is not None:
            return self._not_a_stream(self.whole.body())
        for data in self.reader.finish():
            if self._event(data):
                break
        return self.reply()

    def _event(self, data: str) -> bool:
        if not data.strip():
            return False  # a keep-alive event without data
        if data.strip() == "[DONE]":
            self.done = True
            return True
        parsed = _parse(data)
        self.chunks.append(Chunk(self.elapsed(), parsed, excerpt(data)))
        self.problem = event_problem(len(self.chunks), parsed, data)
        if self.problem is not None:
            return True
        if self.stop_after is not None and len(self.chunks) >= self.stop_after:
            self.hung_up = True
            return True
        return False

    def elapsed(self) -> float:
        return time.perf_counter() - self.deadline.start

    def failed(self, exc: BaseException) -> StreamReply:
        """The answer when reading stopped on an exception (the guard's, or httpx's)."""
        if isinstance(exc, AnswerStopped):
            return self.reply(str(exc))
        return self.reply(transport_line(exc, self.deadline, self.reader.progress()))

    def _not_a_stream(self, data: bytes) -> StreamReply:
        """The server sent something other than an event stream: a 2xx is an error quoting
        it; another status speaks for itself (with its body kept)."""
        assert self.status is not None
        text, error = _decoded(data, self.status)
        if 200 <= self.status < 300:
            kind = self.content_type.split(";")[0].strip() or "no content type"
            error = f"HTTP {self.status} answered {kind}, not an event stream: {shown(text)}"
        return StreamReply(
            self.status, (), self.elapsed(), False, error, excerpt(text), self.asked, self.location
        )

    @property
    def asked(self) -> str:
        return f"POST {self.path}"

    def reply(self, error: str | None = None) -> StreamReply:
        error = error or self.problem
        if error is None and self.hung_up:
            error = f"client hung up after {len(self.chunks)} events"
        if error is None and not self.done and not _finished(self.chunks):
            error = (
                f"the stream ended after {len(self.chunks)} events without [DONE] or a "
                "finish_reason"
            )
        return StreamReply(
            self.status,
            tuple(self.chunks),
            self.elapsed(),
            self.done,
            error,
            "",
            self.asked,
            self.location,
            out_of_case_time=error is not None and _cut_by_case(self.deadline),
            hung_up=self.hung_up,
        )


def _finished(chunks: Sequence[Chunk]) -> bool:
    return any(isinstance(c.choice.get("finish_reason"), str) for c in chunks)


def _is_stream(status: int, content_type: str) -> bool:
    return 200 <= status < 300 and content_type.startswith("text/event-stream")


def stream(
    client: httpx.Client,
    endpoint: Endpoint,
    path: str,
    body: Mapping[str, Any],
    *,
    stop_after_chunks: int | None = None,
    case_end: float | None = None,
) -> StreamReply:
    """POST ``body`` with ``stream: true`` and read its events as they arrive, within the
    request's deadline and the size cap; a stream that ends with neither ``[DONE]`` nor a
    finish_reason, or carries an event that is not a completion chunk, is an error.

    ``stop_after_chunks``: hang up after that many events (a client that disconnects).
    """
    events = _Events(client, path, stop_after_chunks, case_end)
    try:
        with client.stream(**events.request(endpoint, body)) as response:
            events.begin(response)
            for piece in response.iter_bytes():
                if events.feed(piece):
                    return events.reply()
            return events.end()
    except Exception as exc:  # the guard's AnswerStopped, httpx's errors: one line each
        return events.failed(exc)


async def astream(
    client: httpx.AsyncClient,
    endpoint: Endpoint,
    path: str,
    body: Mapping[str, Any],
    *,
    case_end: float | None = None,
    on_events: Callable[[int], None] | None = None,
) -> StreamReply:
    """:func:`stream` for load: many at once on one event loop. ``on_events(n)`` is told the
    count of events read so far after each piece of the body (a scenario that acts once its
    streams are decoding)."""
    events = _Events(client, path, None, case_end)
    try:
        async with client.stream(**events.request(endpoint, body)) as response:
            events.begin(response)
            async for piece in response.aiter_bytes():
                stop = events.feed(piece)
                if on_events is not None:
                    on_events(len(events.chunks))
                if stop:
                    return events.reply()
            return events.end()
    except Exception as exc:
        return events.failed(exc)


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
    """Count the tokens each text chunk carries (its text and reasoning):
    :func:`piece_arrivals` over the chunks."""
    return piece_arrivals(((c.t_s, c.text + c.reasoning) for c in chunks), count_tokens)


def piece_arrivals(
    pieces: Iterable[tuple[float, str]], count_tokens: Callable[[str], int] | None
) -> TokenArrivals:
    """Count the tokens each ``(time, text)`` piece carries: the token count of all text so far,
    less the count before it (so a token cut across pieces is not counted twice); without a
    tokenizer, one a piece (what other serving benchmarks always assume). Empty pieces carry
    nothing and are left out."""
    times: list[float] = []
    counts: list[int] = []
    text = ""
    before = 0
    for t_s, piece in pieces:
        if not piece:
            continue
        text += piece
        if count_tokens is None:
            counts.append(1)
        else:
            now = count_tokens(text)
            counts.append(max(now - before, 0))
            before = max(now, before)
        times.append(t_s)
    return TokenArrivals(
        tuple(times), tuple(counts), "chunks" if count_tokens is None else "tokenizer"
    )
