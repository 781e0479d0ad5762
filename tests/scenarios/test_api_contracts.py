"""``api_contracts`` against the planted server: a clean server passes every check, and each
planted bug is caught by exactly the check named for it, and by no other.

The planted servers run as real processes (``tests/servers``); the checks run directly, several
servers at once (one module fixture), and the clean server also through the real runner
(``mlx-harness run`` on a suite with ``url:``), next to a planted one, with the report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from harness.backends.openai_client import Endpoint, sync_client
from harness.cli import main
from harness.core.types import Status
from harness.results.store import load_run
from harness.scenarios.api_contracts import ApiContractsParams, run_checks
from harness.scenarios.api_contracts.catalog import CHECK_NAMES
from harness.scenarios.api_contracts.verdicts import Api, CheckContext, CheckResult, Limits, Verdict
from tests.servers.planted_process import planted_server
from tests.servers.planted_requests import Plant
from tests.servers.toy_model import render_chat

# the bug each plant carries -> the one check that must catch it (a set: a bug every check
# of a family must fail)
TOOL_CHECKS = frozenset(
    ("tool_call_finish_reason", "tool_call_arguments", "tool_call_stream_merge", "tool_call_markup")
)
CAUGHT_BY: Mapping[Plant, str | frozenset[str]] = {
    Plant.STOP_LEAK_STREAM: "stop_string",
    Plant.STOP_LEAK_SPLIT: "stop_string",
    Plant.FINISH_LENGTH_ON_STOP: "finish_reason",
    Plant.STREAM_TEXT_DIFFERS: "stream_equals_nonstream",
    Plant.USAGE_STREAM_DIFFERS: "usage",
    Plant.USAGE_CACHE_DIFFERS: "usage",
    Plant.NO_CACHED_TOKENS: "cached_tokens",
    Plant.INVALID_PARAMS_200: "invalid_params",
    Plant.INVALID_PARAMS_DROP: "invalid_params",
    Plant.DISCONNECT_CORRUPTS: "disconnect",
    Plant.SEED_IGNORED: "seed",
    Plant.TOP_K_IGNORED: "top_k",
    Plant.TEMPERATURE_ZERO_SEEDED: "temperature_zero",
    Plant.MAX_TOKENS_OFF_BY_ONE: "max_tokens",
    Plant.TOP_P_IGNORED: "top_p",
    Plant.MIN_P_IGNORED: "min_p",
    Plant.PENALTY_DROPPED_UNSEEDED: "frequency_penalty",  # mlx-lm#1225 (0.31.2-0.31.3)
    Plant.XTC_DIES: "xtc",  # mlx-lm#1257 (0.30.4-0.31.3)
    Plant.THINK_LEAK: "reasoning",
    Plant.SHARED_KV_CACHE: "concurrent",
    Plant.BATCH_LEAVES_KV: "concurrent",  # only on the requests asked again after the batch
    Plant.BATCH_CHECKPOINT_SWAP: "concurrent",  # only on new prompts batched, then alone
    Plant.JOIN_MID_PROMPT: "concurrent",  # only on the staggered round's second request
    Plant.JOIN_PAIR_MID_PROMPT: "concurrent",  # only on its second and fourth, sent together
    Plant.TOOL_FINISH_STOP: "tool_call_finish_reason",
    Plant.TOOL_ARGS_OBJECT: "tool_call_arguments",
    Plant.TOOL_STREAM_DIFFERS: "tool_call_stream_merge",
    Plant.TOOL_MARKUP_LEAK: "tool_call_markup",
    Plant.TOOL_CALL_DROPPED: TOOL_CHECKS,  # no call to judge: each fails on the own tokens
    Plant.TOOL_CALL_DROPPED_EVERYWHERE: TOOL_CHECKS,  # own tokens empty too: tokens went missing
    Plant.MESSAGE_CONTENT_MISSING: "message_content",  # mlx-lm#1738 (0.31.2-0.31.3)
    Plant.EXACT_HIT_DIES: "continuation",  # mlx-lm#1215: the prompt followed by its answer
    Plant.RESPONSES_DROP_PREVIOUS: "responses_state",
    Plant.RESPONSES_STATUS_COMPLETED: "responses_text",
    Plant.RESPONSES_STREAM_DIFFERS: "responses_stream",
    Plant.MESSAGES_STOP_END_TURN: "messages_text",
    Plant.MESSAGES_STREAM_DIFFERS: "messages_stream",
    Plant.EMBEDDINGS_ONE_VECTOR: "embeddings",
    Plant.LOGPROBS_LAST_ARGS: "logprobs",  # mlx-lm#1072: only on the requests joining a stream
}
LIMITS = Limits(
    max_tokens=24,
    long_max_tokens=48,
    timeout_s=20.0,
    concurrency=4,
    settle_s=0.2,
    require_reuse=True,
)
CLEAN = "clean"
COMPLETIONS = "clean-completions"
NEEDS_CHAT = {
    "reasoning",
    "logprobs",
    *(n for n in CHECK_NAMES if n.startswith("tool_call")),
    "message_content",
    # the other surfaces: their text is compared with the chat answer
    *(n for n in CHECK_NAMES if n.startswith(("responses_", "messages_"))),
}

Verdicts = dict[str, tuple[CheckResult, ...]]


class ToyRenderer:
    """The toy's chat template, rendered here as the planted server renders it."""

    bos_token_id = None

    def chat_template_text(self) -> str | None:
        return "toy"

    def render_chat(self, messages: Sequence[Mapping[str, Any]], **template_kwargs: Any) -> str:
        return render_chat(messages, template_kwargs.get("tools") or [])


class NoCallRenderer(ToyRenderer):
    """The toy's template with the question changed: the toy then calls nothing."""

    def render_chat(self, messages: Sequence[Mapping[str, Any]], **template_kwargs: Any) -> str:
        plain = [{**m, "content": "hello"} if m.get("role") == "user" else m for m in messages]
        return super().render_chat(plain, **template_kwargs)


def _no_call_exchange(ctx: CheckContext) -> Any:
    """The tool exchange of a chat answer without a call (the toy asked a plain question)."""
    from harness.scenarios.api_contracts.asking import ask, ask_stream
    from harness.scenarios.api_contracts.checks_tools import ToolExchange

    payload = {"messages": [{"role": "user", "content": "hello"}], "max_tokens": 8}
    whole, whole_exchange = ask(ctx, payload)
    streamed, stream_exchange = ask_stream(ctx, payload)
    return ToolExchange(whole, whole_exchange, streamed, stream_exchange)


# plants that act only on requests running at the same time: their tokens come slowly (a
# request lasts about half a second), so the batch's requests overlap even on a loaded machine
OVERLAPPING = {
    Plant.SHARED_KV_CACHE,
    Plant.BATCH_LEAVES_KV,
    Plant.BATCH_CHECKPOINT_SWAP,
    Plant.LOGPROBS_LAST_ARGS,
}
# plants for other scenarios (cancellation, soak, reasoning): no contract check is meant to
# catch them (a reasoning sent as content leaves no markup for the reasoning check to see)
OTHER_SCENARIOS = {
    Plant.CANCEL_KEEPS_GENERATING,
    Plant.LEAK_PER_REQUEST,
    Plant.REASONING_AS_CONTENT,
    Plant.THINK_NEVER_CLOSED,
}


def _targeted(key: str) -> list[str]:
    """The checks run on ``key`` in `make test`: every one on the clean servers and the
    prompt-blind one; on a planted bug, the checks that must catch it (and those it leaves
    unable to judge). Every check on every plant runs nightly (:func:`everything`)."""
    if key in (CLEAN, COMPLETIONS, Plant.PROMPT_BLIND.value):
        return list(CHECK_NAMES)
    plant = Plant(key)
    wanted = {*_caught_by(plant), *CANNOT_JUDGE.get(plant, ())}
    return [n for n in CHECK_NAMES if n in wanted]


def _run(key: str, checks: list[str]) -> tuple[str, tuple[CheckResult, ...]]:
    plant = None if key in (CLEAN, COMPLETIONS) else Plant(key)
    api = Api.COMPLETIONS if key == COMPLETIONS else Api.CHAT
    delay_ms = 20.0 if plant in OVERLAPPING else 1.0
    with (
        planted_server(plant, token_delay_ms=delay_ms) as url,
        sync_client(LIMITS.timeout_s) as client,
    ):
        ctx = CheckContext(client, Endpoint(url), api, LIMITS, key, renderer=ToyRenderer())
        return key, run_checks(ctx, checks)


def _run_all(keys: list[str], checks: Callable[[str], list[str]]) -> Verdicts:
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(lambda key: _run(key, checks(key)), keys))


PLANTED = [p.value for p in Plant if p not in OTHER_SCENARIOS]


@pytest.fixture(scope="module")
def verdicts() -> Verdicts:
    """Every check against the clean server (both APIs) and the prompt-blind one; each other
    planted server with the checks that must catch it; 4 servers at a time."""
    return _run_all([CLEAN, COMPLETIONS, *PLANTED], _targeted)


@pytest.fixture(scope="module")
def everything() -> Verdicts:
    """Every check against every planted server (nightly: 20 checks x 35 servers)."""
    return _run_all([p for p in PLANTED if p != Plant.PROMPT_BLIND.value], lambda _: CHECK_NAMES)


def _not_passed(results: tuple[CheckResult, ...]) -> dict[str, str]:
    return {
        r.name: f"{r.verdict.value}: {r.reason}" for r in results if r.verdict is not Verdict.PASS
    }


# what a server answering every prompt alike leaves not judged: each check that passes on two
# texts being the same
COMPARES_TEXTS = {
    "stream_equals_nonstream",
    "seed",
    "top_k",
    "top_p",
    "min_p",
    "temperature_zero",
    "frequency_penalty",
    "disconnect",
    "concurrent",
    "continuation",  # its own test: the prompt and the prompt + its answer answered alike
    "responses_text",
    "responses_stream",
    "responses_state",  # its own test: the next turn answered alike with and without history
    "messages_text",
    "messages_stream",
}


def _caught_by(plant: Plant) -> list[str]:
    """The checks that must fail on ``plant``, in catalog order."""
    named = CAUGHT_BY[plant]
    wanted = {named} if isinstance(named, str) else set(named)
    return [n for n in CHECK_NAMES if n in wanted]


def test_every_plant_names_the_check_that_catches_it() -> None:
    assert set(CAUGHT_BY) == set(Plant) - {Plant.PROMPT_BLIND, *OTHER_SCENARIOS}
    caught = {n for plant in CAUGHT_BY for n in _caught_by(plant)}
    assert set(CHECK_NAMES) >= TOOL_CHECKS
    # every check has a bug that proves it can fail, and one that only it catches
    assert caught == set(CHECK_NAMES)
    assert {v for v in CAUGHT_BY.values() if isinstance(v, str)} == set(CHECK_NAMES)


def test_clean_server_passes_every_check(verdicts: Verdicts) -> None:
    results = verdicts[CLEAN]
    assert [r.name for r in results] == list(CHECK_NAMES)
    assert _not_passed(results) == {}


def test_completions_api_runs_text_checks_and_leaves_chat_ones_not_applicable(
    verdicts: Verdicts,
) -> None:
    results = {r.name: r for r in verdicts[COMPLETIONS]}
    for name, result in results.items():
        expected = Verdict.NOT_APPLICABLE if name in NEEDS_CHAT else Verdict.PASS
        assert result.verdict is expected, (name, result.reason)
    assert "chat API" in results["tool_call_arguments"].reason


# a plant that leaves another check unable to judge (not applicable, never failed): the
# continuation finds the answer's tokens by the server's counts and lines its answer up with
# a longer one by max_tokens, which these plants falsify
CANNOT_JUDGE: Mapping[Plant, frozenset[str]] = {
    Plant.USAGE_CACHE_DIFFERS: frozenset({"continuation"}),
    Plant.MAX_TOKENS_OFF_BY_ONE: frozenset({"continuation"}),
    # a seeded request at temperature 0 samples: frequency_penalty's seeded answer is no control
    Plant.TEMPERATURE_ZERO_SEEDED: frozenset({"frequency_penalty"}),
    # the call markup left in the content is text: no answer without text to judge on
    Plant.TOOL_MARKUP_LEAK: frozenset({"message_content"}),
}


@pytest.mark.parametrize("plant", list(CAUGHT_BY), ids=[p.value for p in CAUGHT_BY])
def test_each_planted_bug_fails_its_check(verdicts: Verdicts, plant: Plant) -> None:
    _fails_exactly_its_check(verdicts[plant.value], plant)


@pytest.mark.nightly  # every check on every planted server: 60-90 s of CPU here
@pytest.mark.parametrize("plant", list(CAUGHT_BY), ids=[p.value for p in CAUGHT_BY])
def test_each_planted_bug_fails_exactly_its_check(everything: Verdicts, plant: Plant) -> None:
    _fails_exactly_its_check(everything[plant.value], plant)


def _fails_exactly_its_check(results: tuple[CheckResult, ...], plant: Plant) -> None:
    blind = CANNOT_JUDGE.get(plant, frozenset())
    assert all(r.verdict is Verdict.NOT_APPLICABLE for r in results if r.name in blind)
    not_passed = {k: v for k, v in _not_passed(results).items() if k not in blind}
    assert list(not_passed) == _caught_by(plant), not_passed
    failing = [r for r in results if r.verdict is Verdict.FAIL]
    assert len(failing) == len(not_passed)
    for result in failing:
        assert result.evidence, "a failure carries its evidence"
        assert all(e.request.startswith("POST /v1/") for e in result.evidence)


def test_a_dropped_call_fails_on_the_models_own_tokens(verdicts: Verdicts) -> None:
    """The chat answer drops the call (empty, finish_reason stop); the same prompt rendered
    with the template and asked raw holds it: every tool check fails, naming the call."""
    for result in verdicts[Plant.TOOL_CALL_DROPPED.value]:
        if result.name in TOOL_CHECKS:
            assert result.reason.startswith(
                "the model called get_weather (its own greedy tokens hold <tool_call>… naming it)"
                " and the server returned no tool call (non-streamed: finish_reason 'stop', "
                "content empty; streamed: finish_reason 'stop', content empty)"
            ), result.reason
            assert result.evidence[-1].request.startswith("POST /v1/completions ")


def test_a_call_dropped_everywhere_fails_on_the_missing_tokens(verdicts: Verdicts) -> None:
    """mlx-lm#1307: the call is dropped in chat and in /v1/completions alike, so the model's
    own tokens asked there hold nothing; the server still counts the tokens it generated, and
    returning none of them fails every tool check."""
    for result in verdicts[Plant.TOOL_CALL_DROPPED_EVERYWHERE.value]:
        if result.name in TOOL_CHECKS:
            assert result.reason.startswith("the server generated "), result.reason
            assert "tokens for the tool request and returned none of them" in result.reason
            assert "own tokens: the model's own greedy tokens hold none" in result.reason


@pytest.mark.parametrize(
    ("part", "content", "verdict"),
    [
        ("content", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', Verdict.FAIL),  # 0.31.2
        (
            "content",
            '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>',
            Verdict.FAIL,
        ),
        ("content", "It is sunny in Paris.", Verdict.NOT_APPLICABLE),
        # mlx-lm #1160 (0.31.x): a call made inside an open think block, kept as reasoning
        (
            "reasoning",
            'I will call the function.\n<tool_call>\n{"name": "get_weather", "arguments": '
            '{"city": "Paris"}}\n</tool_call>',
            Verdict.FAIL,
        ),
        (
            "reasoning",
            "The user asks about Paris; get_weather answers that.",
            Verdict.NOT_APPLICABLE,
        ),
    ],
)
def test_a_call_left_in_the_content_fails_without_asking_the_own_tokens(
    part: str, content: str, verdict: Verdict
) -> None:
    """No parsed call, the markup in the content or the reasoning: the model called and the
    server did not parse it (mlx-lm 0.31.2 on a call with no end marker; 0.31.x on a call
    inside the think block, #1160); a plain answer stays not applicable."""
    from harness.backends.openai_client import Chunk, Reply, StreamReply
    from harness.scenarios.api_contracts.checks_tools import ToolExchange
    from harness.scenarios.api_contracts.verdicts import Exchange

    key = "content" if part == "content" else "reasoning_content"
    message = {"role": "assistant", key: content}
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    whole = Reply(200, body, "", 0.1, path="POST /v1/chat/completions")
    delta = {"choices": [{"index": 0, "delta": {key: content}, "finish_reason": "stop"}]}
    streamed = StreamReply(200, (Chunk(0.1, delta, ""),), 0.1, True)
    exchange = Exchange("POST /v1/chat/completions {}", "200")
    with sync_client(LIMITS.timeout_s) as client:
        ctx = CheckContext(client, Endpoint("http://127.0.0.1:9"), Api.CHAT, LIMITS, "x")
        ctx.shared["tools"] = ToolExchange(whole, exchange, streamed, exchange)
        for result in run_checks(ctx, sorted(TOOL_CHECKS - {"tool_call_markup"})):
            assert result.verdict is verdict, result.reason
            if verdict is Verdict.FAIL:
                assert result.reason.startswith(f"the non-streamed {part} holds a call ("), (
                    result.reason
                )
                inside = "(a call made inside the think block)" in result.reason
                assert inside is (part == "reasoning"), result.reason


def test_no_call_is_not_applicable_only_when_the_own_tokens_hold_none() -> None:
    """A model that makes no call: n/a when its own tokens hold none; a server whose template
    is not known here: n/a saying the call could not be checked."""
    with planted_server() as url, sync_client(LIMITS.timeout_s) as client:
        for renderer, words in (
            (NoCallRenderer(), "no tool call made: the model's own greedy tokens hold none"),
            (None, "no tool call made: the model's own tokens could not be checked"),
        ):
            ctx = CheckContext(client, Endpoint(url), Api.CHAT, LIMITS, "none", renderer=renderer)
            ctx.shared["tools"] = _no_call_exchange(ctx)
            for result in run_checks(ctx, sorted(TOOL_CHECKS)):
                assert result.verdict is Verdict.NOT_APPLICABLE, result.reason
                assert result.reason.startswith(words), result.reason


def test_batch_leftovers_show_only_when_asked_again(verdicts: Verdicts) -> None:
    (concurrent,) = [r for r in verdicts[Plant.BATCH_LEAVES_KV.value] if r.name == "concurrent"]
    assert "asked again after the 4 and alone" in concurrent.reason
    assert "among 4 and alone" not in concurrent.reason


def test_a_batch_caching_new_prompts_from_another_shows_on_the_fresh_round(
    verdicts: Verdicts,
) -> None:
    """mlx-lm 0.31.0: each new prompt of a batch cached from the batch's last request. Prompts
    asked alone first keep their own entries, so only the fresh round (together, then alone)
    catches it."""
    results = verdicts[Plant.BATCH_CHECKPOINT_SWAP.value]
    (concurrent,) = [r for r in results if r.name == "concurrent"]
    assert "first asked among 4, then alone, texts differ" in concurrent.reason
    assert "asked again after the 4" not in concurrent.reason
    assert "among 4 and alone" not in concurrent.reason


def test_a_request_joining_a_prompt_in_prefill_shows_on_the_staggered_round(
    verdicts: Verdicts,
) -> None:
    """mlx-lm 0.31.2 (#1129/#1169): a request that joins while a long prompt is processed
    starts from that prompt's state. Only the staggered round sends one then (the second and
    the fourth, at the first's keep-alive: the first of them to arrive joins it); the rounds
    sent together, and its third request, sent once the first decodes, pass."""
    results = verdicts[Plant.JOIN_MID_PROMPT.value]
    (concurrent,) = [r for r in results if r.name == "concurrent"]
    assert concurrent.verdict is Verdict.FAIL
    problems = concurrent.reason.split("; ")
    for problem in problems:
        assert problem.startswith(("staggered request 2 (sent at", "staggered request 4 (sent at"))
        assert "asked in turn, then alone, texts differ" in problem
    assert "staggered request 1" not in concurrent.reason
    assert "staggered request 3" not in concurrent.reason


def test_two_requests_joining_a_prompt_in_prefill_together_show_on_the_staggered_round(
    verdicts: Verdicts,
) -> None:
    """mlx-lm 0.31.2 (#1141): two requests joining a prompt in prefill at once (a batch of two
    extending a batch of one) break where one joiner does not. The staggered round sends its
    second and fourth requests together at the first's keep-alive: the later of the two starts
    from the long prompt's state. With one joiner only (the round's old order) the plant
    serves every request right."""
    results = verdicts[Plant.JOIN_PAIR_MID_PROMPT.value]
    (concurrent,) = [r for r in results if r.name == "concurrent"]
    assert concurrent.verdict is Verdict.FAIL
    problems = concurrent.reason.split("; ")
    assert len(problems) == 1, concurrent.reason  # one of the pair, whichever came second
    (problem,) = problems
    assert problem.startswith(("staggered request 2 (sent at", "staggered request 4 (sent at"))
    assert "asked in turn, then alone, texts differ" in problem


def test_a_prompt_blind_model_leaves_text_comparisons_not_judged(verdicts: Verdicts) -> None:
    """Answers alike for every prompt: no text comparison passes, each says why, and the case
    fails naming them (never a pass)."""
    from harness.scenarios.api_contracts import summary

    results = verdicts[Plant.PROMPT_BLIND.value]
    unjudged = {r.name: r.reason for r in results if r.verdict is Verdict.UNJUDGED}
    assert set(unjudged) == COMPARES_TEXTS
    assert all(
        reason.startswith("not judged: the model's answer does not depend on the prompt")
        for reason in unjudged.values()
    )
    assert {r.name for r in results if r.verdict is Verdict.FAIL} == set()
    output = summary(results)
    assert output.timed_out is None
    assert output.failures[-1].startswith("API contract checks not judged: ")
    assert all(name in output.failures[-1] for name in COMPARES_TEXTS)
    clean = {r.name for r in verdicts[CLEAN] if r.verdict is Verdict.PASS}
    assert clean >= COMPARES_TEXTS  # the same checks pass where the answer depends on the prompt


def test_no_reuse_is_a_finding_unless_the_suite_asks_for_reuse() -> None:
    from dataclasses import replace

    with planted_server(Plant.NO_CACHED_TOKENS) as url, sync_client(20.0) as client:
        for require, verdict in ((False, Verdict.NOT_APPLICABLE), (True, Verdict.FAIL)):
            limits = replace(LIMITS, require_reuse=require)
            ctx = CheckContext(client, Endpoint(url), Api.CHAT, limits, f"reuse-{require}")
            (result,) = run_checks(ctx, ["cached_tokens"])
            assert result.verdict is verdict, result.reason
            assert result.reason.startswith("no reuse: " if not require else "cached_tokens 0")


def test_disconnect_judges_against_the_warm_control(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold answer that differs from the warm ones is drift, named, not a hang-up's doing; an
    answer after the hang-up that differs from the warm control fails."""
    from harness.backends.openai_client import Reply, StreamReply
    from harness.scenarios.api_contracts import checks_server
    from harness.scenarios.api_contracts.verdicts import Exchange

    def run(texts: list[str]) -> CheckResult:
        answers = iter(texts)

        def ask(ctx: object, payload: object) -> tuple[Reply, Exchange]:
            body = {"choices": [{"message": {"content": next(answers)}}]}
            reply = Reply(200, body, "", 0.0)
            return reply, Exchange("POST /v1/chat/completions {}", "")

        def ask_stream(ctx: object, payload: object, **_: object) -> tuple[StreamReply, Exchange]:
            return StreamReply(200, (), 0.0, done=False), Exchange("POST", "")

        monkeypatch.setattr(checks_server, "ask", ask)
        monkeypatch.setattr(checks_server, "ask_stream", ask_stream)
        ctx = CheckContext(None, Endpoint("http://x"), Api.CHAT, LIMITS, "n")  # type: ignore[arg-type]
        return checks_server.check_disconnect(ctx)

    drift = run(["cold text", "warm text", "warm text"])
    assert drift.verdict is Verdict.PASS
    assert "not a hang-up's doing" in drift.reason
    broken = run(["same", "same", "other"])
    assert broken.verdict is Verdict.FAIL
    assert "warm control" in broken.reason


def test_reasons_are_one_line_and_evidence_is_kept_as_text(verdicts: Verdicts) -> None:
    for results in verdicts.values():
        for result in results:
            assert result.reason and "\n" not in result.reason, result
            record = result.record()
            assert record["verdict"] in {v.value for v in Verdict}
            assert all(isinstance(e["response"], str) for e in record["evidence"])


@pytest.mark.parametrize(
    ("checks", "hint"),
    [("stop_strng", "did you mean 'stop_string'?"), ("nope", "known: stop_string, ")],
    ids=["misspelt", "unknown"],
)
def test_unknown_check_names_are_one_line_with_the_fix(
    write_suite, capsys: pytest.CaptureFixture[str], checks: str, hint: str
) -> None:
    suite = write_suite(
        "schema_version: 1\nmodels:\n  - {name: s, url: 'http://127.0.0.1:9'}\n"
        f"scenarios:\n  - scenario: api_contracts\n    params: {{checks: [seed, {checks}]}}\n"
    )
    assert main(["validate", str(suite)]) == 2
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if "unknown check" in ln]
    assert line.startswith(f"{suite}:6:")  # the params line
    assert f"unknown check '{checks}'" in line and hint in line


def test_named_checks_run_alone_in_catalog_order() -> None:
    params = ApiContractsParams(checks=["top_k", "seed", "top_k"])
    assert params.checks == ["top_k", "seed"]
    with planted_server() as url, sync_client(10.0) as client:
        ctx = CheckContext(client, Endpoint(url), Api.CHAT, LIMITS, "order")
        results = run_checks(ctx, params.checks)
    assert [r.name for r in results] == ["seed", "top_k"]


def test_runner_runs_the_scenario_on_url_servers_and_reports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "served.suite.yaml"
    reports = tmp_path / "reports"
    with planted_server() as clean, planted_server(Plant.TOP_K_IGNORED) as planted:
        suite.write_text(
            "schema_version: 1\n"
            "models:\n"
            f"  - {{name: clean, url: '{clean}'}}\n"
            f"  - {{name: planted, url: '{planted}'}}\n"
            "scenarios:\n"
            "  - scenario: api_contracts\n"
            "    params: {max_tokens: 16, long_max_tokens: 48, settle_s: 0.2}\n"
        )
        code = main(["run", str(suite), "--report-dir", str(reports), "--run-id", "r"])
    out = capsys.readouterr().out
    assert code == 1, out
    run = load_run(reports / "r")
    by_model = {r.model: r for r in run.results}
    assert by_model["clean"].status is Status.PASSED, by_model["clean"].reason
    assert by_model["planted"].status is Status.FAILED
    assert (by_model["planted"].reason or "").startswith("API contract checks failed: top_k;")
    verdicts = {c["name"]: c["verdict"] for c in by_model["planted"].artifacts["checks"]}
    assert verdicts["top_k"] == "fail"
    assert {v for n, v in verdicts.items() if n != "top_k"} == {"pass"}
    assert by_model["clean"].metric("api_contracts.passed") is not None
    report = (reports / "r" / "report.md").read_text()
    assert "## API contracts" in report
    assert "### FAIL top_k: planted (url)" in report


def test_a_case_out_of_time_keeps_its_timed_out_through_run() -> None:
    """The scenario's own output, not only summary(): checks cut by the case's time limit make
    the case timed out, with the checks judged before kept."""
    import time

    from harness.backends.base import LoadInfo
    from harness.backends.http import ServedModel
    from harness.scenarios.api_contracts import SCENARIO
    from harness.scenarios.base import ScenarioContext

    with planted_server() as url:
        model = ServedModel(Endpoint(url), "url", None)
        info = LoadInfo(0.0, 0, "cpu")
        ctx = ScenarioContext(model, info, 1, 0, lambda: (model, info), case_end=time.monotonic())
        output = SCENARIO.run(ctx, ApiContractsParams(checks=["usage", "seed"]))
    assert output.timed_out is not None and output.timed_out.startswith("2 of 2 contract checks")
    assert {c.status.value for c in output.checks} == {"unjudged"}
    assert output.artifacts["engine"] == "url"


def test_hyphenated_tool_names_are_offered_asked_and_judged() -> None:
    """``tool_names: hyphen`` (mlx-lm#1150's replay): the request offers get-weather, and a
    dropped call to it fails every tool check naming it; the snake_case request is unchanged."""
    import dataclasses

    assert ApiContractsParams().tool_names == "snake"
    assert ApiContractsParams(tool_names="hyphen").tool_names == "hyphen"
    with pytest.raises(ValueError):
        ApiContractsParams(tool_names="camel")  # type: ignore[arg-type]
    hyphen = dataclasses.replace(LIMITS, tool_names="hyphen")
    with (
        planted_server(Plant.TOOL_CALL_DROPPED) as url,
        sync_client(hyphen.timeout_s) as client,
    ):
        ctx = CheckContext(client, Endpoint(url), Api.CHAT, hyphen, "h", renderer=ToyRenderer())
        results = run_checks(ctx, sorted(TOOL_CHECKS))
    for result in results:
        assert result.verdict is Verdict.FAIL, result.reason
        assert result.reason.startswith("the model called get-weather ("), result.reason
    sent = results[0].evidence[0].request
    assert '"get-weather"' in sent and '"get_weather"' not in sent, sent


def test_two_calls_asked_when_the_case_says_so() -> None:
    """``tool_call_count: 2`` (mlx-lm#1170's replay) asks for the weather in two cities."""
    from harness.core.tool_request import PAIR_PROMPT, TOOL_PROMPT
    from harness.scenarios.api_contracts.checks_tools import asked_messages

    with sync_client(LIMITS.timeout_s) as client:
        for count, question in ((1, TOOL_PROMPT), (2, PAIR_PROMPT)):
            limits = Limits(**{**LIMITS.__dict__, "tool_call_count": count})
            ctx = CheckContext(client, Endpoint("http://127.0.0.1:9"), Api.CHAT, limits, "x")
            assert asked_messages(ctx)[-1]["content"] == question
    assert "Paris and in Rome" in PAIR_PROMPT
    assert ApiContractsParams(tool_call_count=2).tool_call_count == 2
    with pytest.raises(ValueError):
        ApiContractsParams(tool_call_count=3)  # type: ignore[arg-type]


def test_a_message_without_its_content_key_fails_and_content_null_passes(
    verdicts: Verdicts,
) -> None:
    """mlx-lm#1738 (0.31.2-0.31.3) over HTTP: the tool call's message sent as {role,
    tool_calls} fails, naming its keys; the clean server's content null passes."""
    clean = {r.name: r for r in verdicts[CLEAN]}["message_content"]
    assert clean.verdict is Verdict.PASS, clean.reason
    assert "tool request: content null" in clean.reason
    planted = {r.name: r for r in verdicts[Plant.MESSAGE_CONTENT_MISSING.value]}
    result = planted["message_content"]
    assert result.verdict is Verdict.FAIL
    assert result.reason.startswith(
        "the tool request's non-streamed message has no content key (its keys: role, tool_calls)"
    ), result.reason
