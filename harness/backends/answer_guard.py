"""Reading one HTTP answer so that a misbehaving server can neither stall nor fool the client.

A request has a total deadline (its own limit, cut short by the case's when that ends sooner),
not only a limit on the gap between reads: a server that sends a token every 50 ms forever is
stopped at the deadline. An answer has a size cap: a 50 MB delta is stopped at the cap, not
held. Event streams are decoded as they arrive, strictly as UTF-8, with httpx-sse's decoders.
Every way an answer can go wrong ends in :class:`AnswerStopped` carrying one line that names
the cause; the reading functions in :mod:`harness.backends.openai_client` turn it into the
reply's ``error``.
"""

from __future__ import annotations

import codecs
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.core.visible_text import visible

MAX_ANSWER_BYTES = 16 * 2**20  # no OpenAI answer the harness asks for comes near this
SHOWN_CHARS = 80  # of a body or an event quoted in a reason


class AnswerStopped(Exception):
    """The answer could not be read to a good end; ``str()`` is the one-line cause."""


@dataclass(frozen=True)
class Deadline:
    """When a request must have its whole answer, as ``time.perf_counter()`` values.

    ``seconds``: the budget it started with; ``by_case``: the case's time limit set it (the
    request's own limit was longer), so running out is the case's timeout, not the server's
    fault alone."""

    start: float
    seconds: float
    by_case: bool

    @classmethod
    def starting_now(cls, limit_s: float, case_end: float | None) -> Deadline:
        """A budget of ``limit_s`` from now, or less when the case ends (``case_end``, a
        ``time.monotonic()`` value) sooner."""
        budget, by_case = limit_s, False
        if case_end is not None:
            left = case_end - time.monotonic()
            if left < limit_s:
                budget, by_case = max(left, 0.001), True
        return cls(time.perf_counter(), budget, by_case)

    def left_s(self) -> float:
        return self.seconds - (time.perf_counter() - self.start)

    def passed(self) -> bool:
        return self.left_s() <= 0

    def missed(self, progress: str) -> str:
        """The reason a request ran out of time: ``no complete answer within 2 s (...)``."""
        whose = "the case's time limit" if self.by_case else "the request's limit"
        return f"no complete answer within {self.seconds:.3g} s ({whose}); {progress}"


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """The first non-empty line of ``text`` in quotes, acting characters escaped (the one
    escaper), cut to ``limit`` characters: a body or event in a reason line."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return f"'{visible(line, limit)}'" if line else "(empty)"


def size_text(nbytes: int) -> str:
    if nbytes < 2**10:
        return f"{nbytes} bytes"
    if nbytes < 2**20:
        return f"{nbytes / 2**10:.1f} KiB"
    return f"{nbytes / 2**20:.1f} MiB"


class BodyReader:
    """Takes the pieces of a body as they arrive: counts them against the cap and the
    deadline, keeps them (a body is read whole only when it is small enough)."""

    def __init__(
        self,
        deadline: Deadline,
        cap_bytes: int = MAX_ANSWER_BYTES,
        events: Callable[[], int] | None = None,
    ) -> None:
        self.deadline = deadline
        self.cap_bytes = cap_bytes
        self.nbytes = 0
        self._pieces: list[bytes] = []
        self._events = events  # how many events came so far, for a stream's reasons

    def progress(self) -> str:
        """How far the answer came: ``12 events, 3.1 KiB so far`` or ``0 bytes so far``."""
        size = f"{size_text(self.nbytes)} so far"
        return f"{self._events()} events, {size}" if self._events is not None else size

    def take(self, piece: bytes, *, keep: bool = True) -> None:
        self.nbytes += len(piece)
        if self.nbytes > self.cap_bytes:
            raise AnswerStopped(
                f"the answer passed the harness's size cap of {size_text(self.cap_bytes)}; "
                "stopped reading"
            )
        if keep:
            self._pieces.append(piece)
        if self.deadline.passed():
            raise AnswerStopped(self.deadline.missed(self.progress()))

    def body(self) -> bytes:
        return b"".join(self._pieces)


class EventReader:
    """An event stream's bytes in, its events' data out: strict UTF-8, SSE lines and events
    decoded by httpx-sse's own decoders, the cap and the deadline checked on every piece."""

    def __init__(self, deadline: Deadline, cap_bytes: int = MAX_ANSWER_BYTES) -> None:
        from httpx_sse._decoders import SSEDecoder, SSELineDecoder

        self.body = BodyReader(deadline, cap_bytes, lambda: self.events)
        self._text = codecs.getincrementaldecoder("utf-8")("strict")
        self._lines = SSELineDecoder()
        self._events = SSEDecoder()
        self.events = 0

    def feed(self, piece: bytes) -> list[str]:
        """The data of each event ``piece`` completes."""
        self.body.take(piece, keep=False)
        try:
            text = self._text.decode(piece)
        except UnicodeDecodeError as exc:
            raise AnswerStopped(
                f"the event stream is not valid UTF-8 (byte {exc.object[exc.start]:#04x} "
                f"after {self.events} events)"
            ) from None
        return self._decode(self._lines.decode(text)) if text else []

    def finish(self) -> list[str]:
        """The events the end of the stream completes (a last event without its blank line)."""
        try:
            tail = self._text.decode(b"", final=True)
        except UnicodeDecodeError:
            raise AnswerStopped("the event stream ends inside a UTF-8 character") from None
        lines = (self._lines.decode(tail) if tail else []) + self._lines.flush()
        return self._decode([*lines, ""])

    def _decode(self, lines: list[str]) -> list[str]:
        found = []
        for line in lines:
            event = self._events.decode(line.rstrip("\n"))
            if event is not None:
                self.events += 1
                found.append(event.data)
        return found

    def progress(self) -> str:
        return self.body.progress()


def server_message(body: Any, raw: str) -> str:
    """What the server said about its own failure: ``error.message`` (OpenAI), ``error`` as a
    string, ``detail`` (FastAPI) or ``message``; else the first line of the body."""
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return shown(error["message"], 160)
        for key in ("error", "detail", "message"):
            if isinstance(body.get(key), str):
                return shown(body[key], 160)
        if body.get("detail") is not None:
            return shown(json.dumps(body["detail"]), 160)
    return shown(raw) if raw else "(empty body)"


def event_problem(index: int, data: Any, raw: str) -> str | None:
    """Why the ``index``-th event (from 1) of a completion stream is not one, else None: not
    JSON, an error object, or neither ``choices`` nor a final usage/timings object."""
    if data is None:
        return f"event {index} is not JSON: {shown(raw)}"
    if not isinstance(data, dict):
        return f"event {index} is JSON but not an object: {shown(raw)}"
    if "error" in data and "choices" not in data:
        return f"event {index} is an error from the server: {server_message(data, raw)}"
    choices = data.get("choices")
    if isinstance(choices, list):
        return None
    if choices is None and ("usage" in data or "timings" in data):
        return None  # a final accounting event
    keys = ", ".join(sorted(map(str, data))[:6]) or "none"
    return f"event {index} has no 'choices' list (keys: {keys})"


def completion_problem(status: int, content_type: str, body: Any, text: str) -> str | None:
    """Why a 2xx answer to a completion request is not one, else None."""
    if body is None:
        kind = content_type.split(";")[0].strip() or "no content type"
        return f"HTTP {status} answered {kind} that is not JSON: {shown(text)}"
    if not isinstance(body, dict):
        return f"HTTP {status} answered JSON that is not an object: {shown(text)}"
    if "error" in body and "choices" not in body:
        return f"HTTP {status} with an error object: {server_message(body, text)}"
    if not isinstance(body.get("choices"), list):
        keys = ", ".join(sorted(map(str, body))[:6]) or "none"
        return f"HTTP {status} answered JSON without a 'choices' list (keys: {keys})"
    return None


def transport_line(exc: BaseException, deadline: Deadline, progress: str) -> str:
    """An httpx failure as the cause a person reads: the timeout and how long, a refused
    connection, a connection the server closed or reset mid-answer."""
    import httpx

    from harness.core.exception_line import exception_line

    what = exception_line(exc, 160)
    if isinstance(exc, httpx.ConnectTimeout):
        return f"cannot connect within {deadline.seconds:.3g} s ({what})"
    if isinstance(exc, httpx.TimeoutException):
        return deadline.missed(f"the server sent nothing more; {progress} ({type(exc).__name__})")
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect ({what})"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"the server broke the HTTP exchange after {progress} ({what})"
    if isinstance(exc, httpx.ReadError | httpx.WriteError):
        return f"the connection broke after {progress} ({what})"
    return what
