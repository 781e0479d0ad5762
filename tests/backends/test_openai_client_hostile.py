"""The HTTP client against a real misbehaving server (:mod:`tests.servers.hostile_openai`):
every mode ends in one line naming its cause, within the request's whole-answer deadline and
the size cap; nothing it sends counts as a good answer."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from harness.backends.answer_guard import MAX_ANSWER_BYTES
from harness.backends.openai_client import (
    Endpoint,
    Reply,
    StreamReply,
    generation_body,
    post,
    request_failure,
    stream,
    sync_client,
)
from tests.servers.hostile_openai import HOSTILE_TEXT, HostileServer, Mode, hostile_server

TIMEOUT_S = 1.5  # the whole-answer limit of each request here
CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    with hostile_server(slow_s=20.0) as running:
        yield running


def _post(server: HostileServer, mode: Mode, path: str = CHAT) -> Reply:
    endpoint = Endpoint(server.mode_url(mode))
    body = generation_body("chat" if path == CHAT else "completions", "Hi", max_tokens=8)
    with sync_client(TIMEOUT_S) as client:
        return post(client, endpoint, path, body)


def _stream(server: HostileServer, mode: Mode, path: str = CHAT) -> StreamReply:
    endpoint = Endpoint(server.mode_url(mode))
    body = generation_body("chat" if path == CHAT else "completions", "Hi", max_tokens=8)
    with sync_client(TIMEOUT_S) as client:
        return stream(client, endpoint, path, body)


# mode -> (the non-streamed answer's failure, the streamed one's): a regular expression each
CAUSES: dict[Mode, tuple[str, str]] = {
    Mode.HTML: (
        r"^HTTP 200 answered text/html that is not JSON: '<!DOCTYPE html>'$",
        r"^HTTP 200 answered text/html, not an event stream: '<!DOCTYPE html>'$",
    ),
    Mode.CUT_JSON: (
        r"^HTTP 200 answered application/json that is not JSON: '\{\"id\": \"hostile-1\"",
        r"^event 2 is not JSON: '\{\"id\": \"hostile-1\", \"choices\"",
    ),
    Mode.SSE_GARBAGE: (
        r"^HTTP 200 answered application/json that is not JSON: '<<garbage>> not json'$",
        r"^event 1 is not JSON: '<<garbage>> not json'$",
    ),
    Mode.ENDLESS: (
        r"^no complete answer within 1\.5 s \(the request's limit\); \d+ bytes so far$",
        r"^no complete answer within 1\.5 s \(the request's limit\); \d+ events, .* so far$",
    ),
    Mode.SLOW_HEADERS: (
        r"^no complete answer within 1\.5 s \(the request's limit\); the server sent nothing "
        r"more; 0 bytes so far \(ReadTimeout\)$",
        r"^no complete answer within 1\.5 s \(the request's limit\); the server sent nothing "
        r"more; 0 events, 0 bytes so far \(ReadTimeout\)$",
    ),
    Mode.HUGE: (
        r"^the answer passed the harness's size cap of 16\.0 MiB; stopped reading$",
        r"^the answer passed the harness's size cap of 16\.0 MiB; stopped reading$",
    ),
    Mode.BAD_UTF8: (
        r"^HTTP 200: the body is not valid UTF-8 \(byte 0xff at \d+\)$",
        r"^the event stream is not valid UTF-8 \(byte 0xff after \d events\)$",
    ),
    Mode.WRONG_SCHEMA: (
        r"^HTTP 200 answered JSON without a 'choices' list \(keys: result\)$",
        r"^event 1 has no 'choices' list \(keys: done, text\)$",
    ),
    Mode.ERROR_500: (
        r"^HTTP 500 at POST /v1/chat/completions: 'CUDA error: out of memory \(simulated\)'$",
        r"^HTTP 500 at POST /v1/chat/completions: 'CUDA error: out of memory \(simulated\)'$",
    ),
    Mode.REDIRECT: (
        r"^HTTP 307 at POST /v1/chat/completions redirects to "
        r"'http://127\.0\.0\.1:9/v1/chat/completions': the harness does not follow redirects; "
        r"name the final address in url:$",
    )
    * 2,
    Mode.RESET: (
        r"^the (server broke the HTTP exchange|connection broke) after 0 bytes so far \(",
        r"^the (server broke the HTTP exchange|connection broke) after 0 events, 0 bytes so far \(",
    ),
}


@pytest.mark.parametrize("mode", list(CAUSES), ids=lambda m: m.value)
def test_each_hostile_answer_is_a_failure_naming_its_cause(
    server: HostileServer, mode: Mode
) -> None:
    whole_cause, stream_cause = CAUSES[mode]
    start = time.perf_counter()
    whole = _post(server, mode)
    streamed = _stream(server, mode)
    took = time.perf_counter() - start
    for reply, cause in ((whole, whole_cause), (streamed, stream_cause)):
        assert not reply.ok
        assert reply.failure is not None and re.search(cause, reply.failure), reply.failure
        assert "\n" not in reply.failure
    # the deadline is the whole answer's: an endless or silent server costs about the limit
    # (a generous bound: this is a ceiling against reading forever, not a speed)
    assert took < 4 * TIMEOUT_S + 10


def test_a_stream_without_an_end_is_an_error(server: HostileServer) -> None:
    reply = _stream(server, Mode.NO_END)
    assert reply.content == "The keeper found "  # what came is kept as evidence
    assert not reply.ok and not reply.done
    assert reply.failure == "the stream ended after 3 events without [DONE] or a finish_reason"


def test_no_empty_text_passes_for_an_answer(server: HostileServer) -> None:
    """Modes whose failure once read as an empty answer: never ok, whatever their text."""
    for mode in (Mode.HTML, Mode.CUT_JSON, Mode.WRONG_SCHEMA, Mode.SSE_GARBAGE):
        whole = _post(server, mode)
        assert whole.content == "" and not whole.ok


def test_the_size_cap_stops_reading_early(server: HostileServer) -> None:
    reply = _stream(server, Mode.HUGE)
    assert not reply.ok and reply.chunks == ()  # the 20 MiB event was never held
    assert server.huge_bytes > MAX_ANSWER_BYTES


def test_a_well_behaved_server_is_a_good_answer(server: HostileServer) -> None:
    whole, streamed = _post(server, Mode.WELL), _stream(server, Mode.WELL)
    assert whole.ok and whole.failure is None and whole.content.startswith("The keeper")
    assert streamed.ok and streamed.done and streamed.content == whole.content


def test_hostile_text_is_kept_as_data(server: HostileServer) -> None:
    """Text with ESC and bidi controls is a good answer: kept exactly, escaped when shown."""
    whole, streamed = _post(server, Mode.HOSTILE_TEXT), _stream(server, Mode.HOSTILE_TEXT)
    assert whole.ok and whole.content.startswith(HOSTILE_TEXT + " (")  # + the prompt's mark
    assert streamed.ok and streamed.content == whole.content + " streamed"


def test_a_missing_endpoint_names_the_parameter_to_change(server: HostileServer) -> None:
    reply = _stream(server, Mode.CHAT_ONLY, COMPLETIONS)
    assert request_failure(reply, "completions") == (
        "HTTP 404 at POST /v1/completions: 'Not Found'; the server has no /v1/completions: "
        "set the scenario's params: {endpoint: chat}"
    )
    assert _stream(server, Mode.CHAT_ONLY, CHAT).ok


def test_the_case_deadline_cuts_a_request_and_says_so(server: HostileServer) -> None:
    endpoint = Endpoint(server.mode_url(Mode.ENDLESS))
    body = generation_body("chat", "Hi", max_tokens=8)
    with sync_client(60.0) as client:
        reply = stream(client, endpoint, CHAT, body, case_end=time.monotonic() + 0.5)
    assert reply.out_of_case_time and not reply.ok
    assert reply.failure is not None
    # What is left of the case's half second when the request starts depends on the machine's load.
    assert re.match(
        r"no complete answer within 0\.[345]\d* s \(the case's time limit\)", reply.failure
    ), reply.failure
