"""The real runner (``mlx-harness run``) against a misbehaving server in every mode of
:mod:`tests.servers.hostile_openai`: each case ends with exactly one status and one reason line
naming the cause, no traceback reaches the terminal, a case that runs out of time keeps what it
judged, and no raw control or bidi character reaches a report or the terminal.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from harness.backends.openai_client import Endpoint, sync_client
from harness.cli import main
from harness.core.types import CaseResult, RunRecord, Status
from harness.results.store import load_run
from harness.runner.messages import ResultReply
from harness.runner.outcome import outcome_of
from harness.scenarios import api_contracts
from harness.scenarios.api_contracts.catalog import CHECKS
from harness.scenarios.api_contracts.verdicts import (
    Api,
    CheckContext,
    CheckResult,
    ContractCheck,
    Limits,
    Verdict,
)
from tests.report.acting_characters import acting_in, assert_no_acting_characters
from tests.report.headless_chromium import Chromium, find_chromium, is_ci
from tests.report.markup_facts import dom_facts
from tests.servers.hostile_openai import LOGPROBS_MODES, HostileServer, Mode, hostile_server

THROUGHPUT_TIMEOUT_S = 6  # per case: the endless and silent modes run into it
CONTRACTS_TIMEOUT_S = 30
REQUEST_TIMEOUT_S = 2  # api_contracts' own limit per request
RUN_CHECKS = ("stream_equals_nonstream", "seed", "top_p", "min_p")
# the modes of the run: the logprobs ones have tests of their own (test_api_contracts_logprobs)
MODES = tuple(m for m in Mode if m not in LOGPROBS_MODES)

CASE_CUT = r"no complete answer within [\d.]+ s \(the case's time limit\)"
REQUEST_CUT = r"no complete answer within 2 s \(the request's limit\)"

# mode -> http_throughput's (status, reason pattern): the cause, named
THROUGHPUT: Mapping[Mode, tuple[Status, str]] = {
    Mode.WELL: (Status.PASSED, ""),
    Mode.HOSTILE_TEXT: (Status.PASSED, ""),
    Mode.CHAT_ONLY: (Status.PASSED, ""),  # chat is the default endpoint
    Mode.REJECTS_SAMPLING: (Status.PASSED, ""),
    Mode.HTML: (Status.FAILED, r"HTTP 200 answered text/html, not an event stream: '<!DOCTYPE"),
    Mode.CUT_JSON: (Status.FAILED, r"event 2 is not JSON: '\{\"id\""),
    Mode.SSE_GARBAGE: (Status.FAILED, r"event 1 is not JSON: '<<garbage>> not json'"),
    Mode.NO_END: (Status.FAILED, r"the stream ended after 3 events without \[DONE\] or a finish"),
    Mode.ENDLESS: (Status.TIMED_OUT, r"ran out after 0 of 1 measured requests: " + CASE_CUT),
    Mode.SLOW_HEADERS: (Status.TIMED_OUT, r"ran out after 0 of 1 measured requests: " + CASE_CUT),
    Mode.HUGE: (Status.FAILED, r"passed the harness's size cap of 16\.0 MiB"),
    Mode.BAD_UTF8: (Status.FAILED, r"the event stream is not valid UTF-8 \(byte 0xff"),
    Mode.WRONG_SCHEMA: (Status.FAILED, r"event 1 has no 'choices' list \(keys: done, text\)"),
    Mode.ERROR_500: (Status.FAILED, r"HTTP 500 at POST /v1/chat/completions: 'CUDA error: out"),
    Mode.REDIRECT: (Status.FAILED, r"HTTP 307 at POST /v1/chat/completions redirects to 'http"),
    Mode.RESET: (Status.FAILED, r"the (server broke the HTTP exchange|connection broke) after 0"),
}

# mode -> api_contracts' (status, reason pattern)
CONTRACTS: Mapping[Mode, tuple[Status, str]] = {
    Mode.WELL: (Status.PASSED, ""),
    Mode.HOSTILE_TEXT: (
        Status.FAILED,
        r"stream_equals_nonstream: streamed and non-streamed content differ at character",
    ),
    Mode.CHAT_ONLY: (Status.PASSED, ""),
    Mode.REJECTS_SAMPLING: (Status.PASSED, ""),  # top_p, min_p: unsupported, not applicable
    Mode.HTML: (Status.FAILED, r"stream_equals_nonstream: .*answered text/html"),
    Mode.CUT_JSON: (Status.FAILED, r"stream_equals_nonstream: .*not JSON"),
    Mode.SSE_GARBAGE: (
        Status.FAILED,
        r"stream_equals_nonstream: .*not JSON: '<<garbage>> not json'",
    ),
    Mode.NO_END: (Status.FAILED, r"stream_equals_nonstream: .*without \[DONE\] or a finish_reason"),
    Mode.ENDLESS: (Status.FAILED, r"stream_equals_nonstream: .*" + REQUEST_CUT),
    Mode.SLOW_HEADERS: (Status.FAILED, r"stream_equals_nonstream: .*" + REQUEST_CUT),
    Mode.HUGE: (Status.FAILED, r"stream_equals_nonstream: .*size cap of 16\.0 MiB"),
    Mode.BAD_UTF8: (Status.FAILED, r"stream_equals_nonstream: .*not valid UTF-8"),
    Mode.WRONG_SCHEMA: (Status.FAILED, r"stream_equals_nonstream: .*without a 'choices' list"),
    Mode.ERROR_500: (
        Status.FAILED,
        r"stream_equals_nonstream: .*HTTP 500 at POST .*'CUDA error: out",
    ),
    Mode.REDIRECT: (
        Status.FAILED,
        r"stream_equals_nonstream: .*HTTP 307 at POST .*redirects to 'http",
    ),
    Mode.RESET: (
        Status.FAILED,
        r"stream_equals_nonstream: .*(server broke the HTTP|connection broke)",
    ),
}


@dataclasses.dataclass(frozen=True)
class HostileRun:
    run: RunRecord
    terminal: str  # what the run printed, stdout and stderr
    run_dir: Path  # where its record and reports are


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileRun]:
    """One run of both scenarios over every mode: its record, what the terminal showed, and
    the folder its reports were written to."""
    root = tmp_path_factory.mktemp("hostile")
    suite, reports = root / "hostile.suite.yaml", root / "reports"
    with hostile_server(slow_s=60.0) as server:
        suite.write_text(_suite(server))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["run", str(suite), "--report-dir", str(reports), "--run-id", "h"])
    assert code == 1  # failures were found: the run says so
    yield HostileRun(load_run(reports / "h"), out.getvalue() + err.getvalue(), reports / "h")


def _suite(server: HostileServer) -> str:
    models = "".join(f"  - {{name: {m.value}, url: '{server.mode_url(m)}'}}\n" for m in MODES)
    checks = ", ".join(RUN_CHECKS)
    return (
        "schema_version: 1\n"
        "defaults: {repeats: 1, warmup: 0}\n"
        f"models:\n{models}"
        "scenarios:\n"
        "  - scenario: http_throughput\n"
        f"    timeout_s: {THROUGHPUT_TIMEOUT_S}\n"
        "    params: {prompt_tokens: 16, gen_tokens: 4}\n"
        "  - scenario: api_contracts\n"
        f"    timeout_s: {CONTRACTS_TIMEOUT_S}\n"
        f"    params: {{checks: [{checks}], request_timeout_s: {REQUEST_TIMEOUT_S}, "
        "max_tokens: 8, long_max_tokens: 16}\n"
    )


def _result(run: RunRecord, mode: Mode, scenario: str) -> CaseResult:
    (found,) = [r for r in run.results if r.model == mode.value and r.scenario == scenario]
    return found


def test_every_case_ends_with_one_status(hostile_run: HostileRun) -> None:
    run, terminal = hostile_run.run, hostile_run.terminal
    keys = [(r.model, r.scenario) for r in run.results]
    assert len(keys) == len(set(keys)) == 2 * len(MODES)
    assert "Traceback" not in terminal


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_http_throughput_names_the_cause(hostile_run: HostileRun, mode: Mode) -> None:
    status, cause = THROUGHPUT[mode]
    result = _result(hostile_run.run, mode, "http_throughput")
    assert result.status is status, result.reason
    assert re.search(cause, result.reason or ""), result.reason
    assert "\n" not in (result.reason or "")
    if status is not Status.PASSED:  # a broken answer is no measurement
        assert not [m.name for m in result.metrics if m.name.startswith("http_throughput.")]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_api_contracts_names_the_cause(hostile_run: HostileRun, mode: Mode) -> None:
    status, cause = CONTRACTS[mode]
    result = _result(hostile_run.run, mode, "api_contracts")
    assert result.status is status, result.reason
    assert re.search(cause, result.reason or ""), result.reason
    verdicts = {c["name"]: c["verdict"] for c in result.artifacts["checks"]}
    assert list(verdicts) == list(RUN_CHECKS)  # every check has its verdict, judged or not
    if mode in (Mode.NO_END, Mode.HOSTILE_TEXT):  # good non-streamed answers: seed asks those
        assert verdicts["seed"] == "pass" and verdicts["stream_equals_nonstream"] == "fail"
    elif status is not Status.PASSED:
        assert "pass" not in verdicts.values()  # no check passes on a failed answer


def test_unsupported_is_told_from_ignored(hostile_run: HostileRun) -> None:
    result = _result(hostile_run.run, Mode.REJECTS_SAMPLING, "api_contracts")
    checks = {c["name"]: c for c in result.artifacts["checks"]}
    for name in ("top_p", "min_p"):
        assert checks[name]["verdict"] == "not_applicable"
        assert checks[name]["reason"].startswith("unsupported (rejected by the server): ")
        assert f"'unsupported parameter: {name}'" in checks[name]["reason"]


def test_a_url_server_gets_the_one_model_it_lists(hostile_run: HostileRun) -> None:
    result = _result(hostile_run.run, Mode.WELL, "api_contracts")
    requests = [e["request"] for c in result.artifacts["checks"] for e in c["evidence"]]
    assert requests and all('"model": "hostile"' in r for r in requests)


def test_the_browser_shows_the_servers_hostile_text_as_escapes(
    hostile_run: HostileRun,
) -> None:
    """report.html of the real run, opened in headless Chromium: the hostile server's ESC
    sequences and bidi overrides are on the page as visible escapes, never raw."""
    binary = find_chromium()
    if binary is None:
        message = "chromium not found: `make system-deps` installs it"
        if is_ci():
            pytest.fail(message)
        pytest.skip(message)
    html = hostile_run.run_dir / "report.html"
    page = dom_facts(Chromium(binary).dump_dom(html.as_uri()))
    values = [*page.texts, *(v for _, _, v in page.attributes)]
    assert [hit for value in values for hit in acting_in(value, "\n\t")] == []
    assert page.shows("\\x1b[31mALERT") or page.shows("\\u001b[31mALERT")
    assert page.shows("\\u202eevil") or page.shows("\\u202eevil".upper())


def test_no_raw_acting_character_reaches_a_report(hostile_run: HostileRun, tmp_path: Path) -> None:
    run, terminal = hostile_run.run, hostile_run.terminal
    result = _result(run, Mode.HOSTILE_TEXT, "api_contracts")
    evidence = "".join(e["response"] for c in result.artifacts["checks"] for e in c["evidence"])
    assert "\\u001b[31m" in evidence or "\x1b" in evidence  # the hostile text is in the record
    assert_no_acting_characters(run)
    assert "\x1b" not in terminal and "\u202e" not in terminal


def test_checks_left_when_the_case_time_runs_out_are_not_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The case's time runs out after the first check: its verdict is kept, the rest are not
    judged, and the case is timed out (not passed, not lost)."""
    real_monotonic = time.monotonic
    case_end = real_monotonic() + 60.0
    judged: list[str] = []

    class Clock:  # the checks' clock: past the case's end once one check has run
        perf_counter = staticmethod(time.perf_counter)

        @staticmethod
        def monotonic() -> float:
            return case_end + 1.0 if judged else real_monotonic()

    def counted(check: ContractCheck) -> ContractCheck:
        def run(ctx: CheckContext) -> CheckResult:
            result = check.run(ctx)
            judged.append(check.name)
            return result

        return dataclasses.replace(check, run=run)

    monkeypatch.setattr(api_contracts, "time", Clock)
    monkeypatch.setattr(api_contracts, "CHECKS", {n: counted(c) for n, c in CHECKS.items()})
    limits = Limits(max_tokens=8, long_max_tokens=16, timeout_s=5.0, concurrency=2, settle_s=0)
    with hostile_server() as server, sync_client(5.0) as client:
        endpoint = Endpoint(server.mode_url(Mode.WELL))
        ctx = CheckContext(client, endpoint, Api.CHAT, limits, "t", case_end=case_end)
        results = api_contracts.run_checks(ctx, ["seed", "top_p", "min_p"])
    assert [(r.name, r.verdict) for r in results] == [
        ("seed", Verdict.PASS),
        ("top_p", Verdict.UNJUDGED),
        ("min_p", Verdict.UNJUDGED),
    ]
    assert (
        results[1].reason == "not judged: the case's time limit (timeout_s) ran out before it ran"
    )
    output = api_contracts.summary(results)
    assert output.timed_out == (
        "2 of 3 contract checks not judged: the case's time limit (timeout_s) ran out; the 1 "
        "judged are kept"
    )
    outcome = outcome_of(ResultReply((), timed_out=output.timed_out))
    assert outcome.status is Status.TIMED_OUT and outcome.reason == output.timed_out


def test_a_check_cut_by_the_case_time_is_not_judged() -> None:
    """A request the case's time cut is no verdict on the server: not judged, with the cause."""
    limits = Limits(max_tokens=8, long_max_tokens=16, timeout_s=30.0, concurrency=2, settle_s=0)
    with hostile_server() as server, sync_client(30.0) as client:
        endpoint = Endpoint(server.mode_url(Mode.ENDLESS))
        ctx = CheckContext(client, endpoint, Api.CHAT, limits, "t", case_end=time.monotonic() + 1.0)
        (result,) = api_contracts.run_checks(ctx, ["seed"])
    assert result.verdict is Verdict.UNJUDGED
    # What is left of the case's second when the request starts depends on the machine's load.
    assert re.match(
        r"not judged: the case's time limit \(timeout_s\) ran out during it: no complete answer "
        r"within (1|0\.\d+) s \(the case's time limit\)",
        result.reason,
    ), result.reason
