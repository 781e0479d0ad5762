"""The tool checks' own-token reading on a release that drops a call everywhere (mlx-lm
0.31.2-0.31.3 on a call closed by the end of turn): the chat answer is empty, and
``/v1/completions`` returns no text either, but its ``logprobs`` still carry the generated token
ids. Decoded here and read by the harness's own parser for the template's markup, with mlx-lm
not importable (a pinned release whose parser is missing or differs), they hold the call: every
tool check fails. A server that returns no ids is read from its text, as before."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.backends.openai_client import Chunk, Endpoint, Reply, StreamReply, sync_client
from harness.models.zoo import templates as t
from harness.scenarios.api_contracts import SCENARIO, ApiContractsParams, run_checks
from harness.scenarios.api_contracts.checks_tools import ToolExchange
from harness.scenarios.api_contracts.own_tokens import token_ids
from harness.scenarios.api_contracts.verdicts import Api, CheckContext, Exchange, Limits, Verdict
from tests.servers.scripted_openai import completion, scripted_server

LIMITS = Limits(max_tokens=8, long_max_tokens=32, timeout_s=10.0, concurrency=2, settle_s=0.0)
TOOL_CHECKS = (
    "tool_call_arguments",
    "tool_call_finish_reason",
    "tool_call_markup",
    "tool_call_stream_merge",
)
CALL = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>'
IDS = list(range(100, 112))  # what the toy tokenizer decodes to CALL
# mlx-lm 0.31.2: the server took [TOOL_CALLS] as its tool state's start and returns the rest
BODY = 'get_weather[ARGS]{"city": "Paris"}</s>'
BODY_IDS = list(range(200, 210))
DECODED = {tuple(IDS): CALL, tuple(BODY_IDS): BODY}


class MistralRenderer:
    """Mistral-Small's template known here; its tokenizer decodes IDS to the call."""

    bos_token_id = None

    def chat_template_text(self) -> str | None:
        return t.MISTRAL_SMALL

    def render_chat(self, messages: Sequence[Mapping[str, Any]], **template_kwargs: Any) -> str:
        return "[INST]What is the weather in Paris right now?[/INST]"

    def decode_tokens(self, ids: Sequence[int]) -> str:
        return DECODED.get(tuple(ids), "?")


@pytest.fixture
def no_mlx_lm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in [m for m in sys.modules if m == "mlx_lm" or m.startswith("mlx_lm.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mlx_lm", None)
    yield


def _empty_exchange() -> ToolExchange:
    """The chat answer of a release that dropped the call: empty, finish_reason stop."""
    message = {"role": "assistant", "content": ""}
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    whole = Reply(200, body, "", 0.1, path="POST /v1/chat/completions")
    delta = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    streamed = StreamReply(200, (Chunk(0.1, delta, ""),), 0.1, True)
    exchange = Exchange("POST /v1/chat/completions {}", "200")
    return ToolExchange(whole, exchange, streamed, exchange)


def _completions(text: str, ids: list[int] | None) -> Any:
    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        out = completion(text, 40, len(ids or IDS))
        if ids and body.get("logprobs") is True:
            entries = [{"id": i, "logprob": -0.1} for i in ids]
            out["choices"][0]["logprobs"] = {"content": entries}
        return 200, out

    return answer


@pytest.mark.parametrize(
    ("text", "ids", "verdict", "reason"),
    [
        # 0.31.3: no text, the ids carry the call
        (
            "",
            IDS,
            Verdict.FAIL,
            "the model called get_weather(city='Paris') (its 12 token ids "
            "decoded here, read as mistral markup by the harness) and the server returned no tool "
            "call",
        ),
        # 0.31.2: the ids and the text hold the call without its [TOOL_CALLS]
        (
            'get_weather[ARGS]{"city": "Paris"}',
            BODY_IDS,
            Verdict.FAIL,
            "the model called get_weather(city='Paris') (its 10 token ids decoded here, read as "
            "mistral markup by the harness; its opening [TOOL_CALLS] missing, taken by the "
            "server) and the server returned no tool call",
        ),
        # ids that decode to other text than the server returned (another vocabulary): the
        # text is read
        (
            "It is sunny.",
            IDS,
            Verdict.NOT_APPLICABLE,
            "no tool call made: the model's own greedy tokens hold none (the text returned, read "
            "as mistral markup by the harness)",
        ),
        # a server without ids whose text holds the call
        (
            CALL,
            None,
            Verdict.FAIL,
            "the model called get_weather(city='Paris') (the text "
            "returned, read as mistral markup by the harness)",
        ),
        # nothing anywhere: not applicable, saying how it was read
        (
            "",
            None,
            Verdict.NOT_APPLICABLE,
            "no tool call made: the model's own greedy tokens "
            "hold none (the text returned, read as mistral markup by the harness)",
        ),
        (
            "It is sunny.",
            None,
            Verdict.NOT_APPLICABLE,
            "no tool call made: the model's own greedy tokens hold none",
        ),
    ],
)
def test_a_call_dropped_everywhere_fails_without_the_installed_parser(
    no_mlx_lm: None, text: str, ids: list[int] | None, verdict: Verdict, reason: str
) -> None:
    with scripted_server(_completions(text, ids)) as url, sync_client(5.0) as client:
        ctx = CheckContext(client, Endpoint(url), Api.CHAT, LIMITS, "x", renderer=MistralRenderer())
        ctx.shared["tools"] = _empty_exchange()
        results = run_checks(ctx, list(TOOL_CHECKS))
    assert sorted(r.name for r in results) == sorted(TOOL_CHECKS)
    for result in results:
        assert result.verdict is verdict and result.reason.startswith(reason), result.reason
    assert "mlx_lm.tool_parsers.mistral" not in sys.modules


@pytest.mark.parametrize(
    ("logprobs", "expected"),
    [
        ({"content": [{"id": 3, "logprob": 0.0}, {"id": 9, "logprob": -1.0}]}, [3, 9]),
        ({"content": [{"token": "a", "logprob": 0.0}]}, None),  # strings only: no ids
        ({"content": [{"id": True}]}, None),
        ({"content": []}, None),
        (None, None),
    ],
)
def test_token_ids_come_only_from_whole_id_lists(logprobs: Any, expected: Any) -> None:
    body = {"choices": [{"index": 0, "text": "", "logprobs": logprobs}]}
    assert token_ids(Reply(200, body, "", 0.1)) == expected


# mlx-lm#1170's kind: the server returns fewer calls than the model made. The own tokens
# (Qwen2.5's Hermes markup, two calls back to back) are read by the harness's json_tools reader.
PARIS = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
ROME = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'
TIME = '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "Europe/Rome"}}\n</tool_call>'
PAIR_IDS = list(range(300, 340))


class HermesRenderer:
    """A Hermes template known here (``<tool_call>`` and ``tool_call.name``: json_tools); its
    tokenizer decodes PAIR_IDS to ``own``."""

    bos_token_id = None

    def __init__(self, own: str, template: str = "<tool_call>{{ tool_call.name }}</tool_call>"):
        self.own = own
        self.template = template

    def chat_template_text(self) -> str | None:
        return self.template

    def render_chat(self, messages: Sequence[Mapping[str, Any]], **template_kwargs: Any) -> str:
        return "<|im_start|>user\nWeather in Paris and Rome?<|im_end|>\n<|im_start|>assistant\n"

    def decode_tokens(self, ids: Sequence[int]) -> str:
        return self.own if list(ids) == PAIR_IDS else "?"


def _call(name: str, arguments: str, index: int | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"id": f"c{index}", "type": "function"}
    call["function"] = {"name": name, "arguments": arguments}
    return call if index is None else {**call, "index": index}


def _calls_exchange(whole: Sequence[str], streamed: Sequence[str]) -> ToolExchange:
    """The chat answer returning calls to the named tools (streamed: one call a chunk)."""
    message = {"role": "assistant", "content": None}
    message["tool_calls"] = [_call(n, '{"city": "Paris"}') for n in whole]  # type: ignore[assignment]
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
    reply = Reply(200, body, "", 0.1, path="POST /v1/chat/completions")
    chunks = tuple(
        Chunk(
            0.1,
            {
                "choices": [
                    {"index": 0, "delta": {"tool_calls": [_call(n, '{"city": "Paris"}', i)]}}
                ]
            },
            "",
        )
        for i, n in enumerate(streamed)
    )
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    stream = StreamReply(200, (*chunks, Chunk(0.1, end, "")), 0.1, True)
    exchange = Exchange("POST /v1/chat/completions {}", "200")
    return ToolExchange(reply, exchange, stream, exchange)


W = "get_weather"


@pytest.fixture(scope="module")
def own_server() -> Iterator[tuple[str, dict[str, str]]]:
    """One scripted server for the count cases: ``/v1/completions`` answers the text set in the
    dict (PAIR_IDS its token ids), or a 500 when none is set (the own tokens must not be
    asked)."""
    own: dict[str, str] = {}

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if "text" not in own:
            return 500, {"error": "not asked"}
        return _completions(own["text"], PAIR_IDS)(method, path, body)

    with scripted_server(answer) as url:
        yield url, own


@pytest.mark.parametrize(
    ("own", "whole", "streamed", "verdict", "reason"),
    [
        (PARIS + ROME, [W, W], [W, W], Verdict.PASS, ""),
        # the second call dropped, streamed and not: every other rule holds
        (
            PARIS + ROME,
            [W],
            [W],
            Verdict.FAIL,
            "the model's own greedy tokens hold 2 tool calls (get_weather, get_weather) and the "
            "server returned 1 non-streamed (get_weather), 1 streamed (get_weather) (its 40 "
            "token ids decoded here, read as json_tools markup by the harness)",
        ),
        (
            PARIS + ROME,
            [W, W],
            [W],
            Verdict.FAIL,
            "the model's own greedy tokens hold 2 tool calls (get_weather, get_weather) and the "
            "server returned 2 non-streamed (get_weather, get_weather), 1 streamed",
        ),
        # as many calls, another tool; a name the request never offered is not quoted
        (
            PARIS + TIME,
            [W, W],
            [W, "rm -rf"],
            Verdict.FAIL,
            "the model's own greedy tokens hold 2 tool calls (get_weather, get_time) and the "
            "server returned 2 non-streamed (get_weather, get_weather), 2 streamed (get_weather, "
            "a name not offered)",
        ),
        # one call made, one returned
        (PARIS, [W], [W], Verdict.PASS, ""),
        # more returned than the own tokens hold: a release that strips call markup from
        # /v1/completions (0.30.5's text, 0.31.2's opening marker in the ids) reads fewer
        (
            '{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
            [W],
            [W],
            Verdict.PASS,
            "",
        ),
        (ROME, [W, W], [W, W], Verdict.PASS, ""),
        # markup that does not parse: how many calls the model made is not known here
        (PARIS + "<tool_call>\n{not json}\n</tool_call>", [W], [W], Verdict.PASS, ""),
    ],
)
def test_the_calls_returned_are_held_to_the_own_tokens_count(
    own_server: tuple[str, dict[str, str]],
    own: str,
    whole: list[str],
    streamed: list[str],
    verdict: Verdict,
    reason: str,
) -> None:
    url, script = own_server
    script["text"] = own
    with sync_client(5.0) as client:
        ctx = CheckContext(
            client, Endpoint(url), Api.CHAT, LIMITS, "x", renderer=HermesRenderer(own)
        )
        ctx.shared["tools"] = _calls_exchange(whole, streamed)
        results = run_checks(ctx, list(TOOL_CHECKS))
    for result in results:
        assert result.verdict is verdict, (result.name, result.reason)
        assert result.reason.startswith(reason), result.reason
        if verdict is Verdict.FAIL:
            assert result.evidence[-1].request.startswith("POST /v1/completions ")


def test_a_template_the_harness_cannot_read_leaves_the_count_unasked(
    own_server: tuple[str, dict[str, str]],
) -> None:
    """No reader for the template's markup: the calls cannot be counted, so the own tokens are
    not asked (the scripted server would fail the request) and one call of two passes."""
    url, script = own_server
    script.pop("text", None)
    with sync_client(5.0) as client:
        renderer = HermesRenderer(PARIS + ROME, template="{{ messages }}")
        ctx = CheckContext(client, Endpoint(url), Api.CHAT, LIMITS, "x", renderer=renderer)
        ctx.shared["tools"] = _calls_exchange([W], [W])
        results = run_checks(ctx, list(TOOL_CHECKS))
    assert all(r.verdict is Verdict.PASS for r in results), [r.reason for r in results]
    assert "tools_own_tokens" not in ctx.shared


PAIR_PLANT = Path(__file__).resolve().parents[1] / "servers" / "second_call_dropped"


@pytest.mark.real_model
@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "verdict"),
    [
        ((), Verdict.PASS),  # the installed release returns both calls
        ((("PYTHONPATH", str(PAIR_PLANT)),), Verdict.FAIL),  # the second call dropped
    ],
    ids=["released", "second-call-dropped"],
)
def test_mlx_lm_server_returning_one_of_two_calls_fails_on_the_pair_caller(
    tmp_path: Path, env: tuple[tuple[str, str], ...], verdict: Verdict
) -> None:
    """zoo/qwen2-pair-caller (trained to call get_weather for both cities, back to back) served
    by the installed mlx_lm.server: both calls come back and every tool check passes; with the
    second call dropped by the plant, every tool check fails, naming both counts."""
    from harness.backends.http import BACKEND
    from harness.core.types import ServerRef
    from harness.models.catalog import find_embedded
    from harness.scenarios.base import ScenarioContext

    found = find_embedded("zoo/qwen2-pair-caller")
    if found is None or not found.prepared:
        pytest.skip("needs zoo/qwen2-pair-caller prepared (make models)")
    server = ServerRef(engine="mlx_lm", env=env)
    model, info = BACKEND.load_server(found.path, server, tmp_path)
    try:
        ctx = ScenarioContext(model, info, 1, 0, lambda: (model, info))
        params = ApiContractsParams(
            checks=list(TOOL_CHECKS), max_tokens=64, request_timeout_s=30, tool_call_count=2
        )
        out = SCENARIO.run(ctx, params)
    finally:
        model.close()  # type: ignore[attr-defined]
    checks = {c.name: c for c in out.checks}
    assert sorted(checks) == sorted(TOOL_CHECKS)
    for check in checks.values():
        assert check.status.value == verdict.value, (check.name, check.reason)
    if verdict is Verdict.FAIL:
        assert checks["tool_call_stream_merge"].reason.startswith(
            "the model's own greedy tokens hold 2 tool calls (get_weather, get_weather) and the "
            "server returned 1 non-streamed (get_weather), 1 streamed (get_weather) (its "
        ), checks["tool_call_stream_merge"].reason
    else:
        assert (
            checks["tool_call_stream_merge"].reason
            == "2 streamed calls equal the non-streamed ones"
        )
