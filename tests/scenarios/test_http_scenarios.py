"""``http_throughput``, ``http_prompt_cache`` and ``greedy_text`` over HTTP, through the real
runner (``mlx-harness run`` on a ``url:`` suite) against the planted server process, whose toy
model sends one or two tokens a chunk: the tokens are counted by the tokenizer, never a chunk
as one token, and agree with the server's own usage."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.core.types import CaseResult, Status
from harness.results.store import load_run
from tests.servers.planted_process import planted_server
from tests.servers.planted_requests import Plant
from tests.servers.toy_model import write_model_folder

SUITE = """\
schema_version: 1
defaults: {{repeats: 3, warmup: 1, timeout_s: 120}}
models:
  - name: toy
    url: '{url}'
    path: {folder}
  - name: toy-no-tokenizer
    url: '{url}'
scenarios:
  - scenario: http_throughput
    params: {{prompt_tokens: 32, gen_tokens: 24}}
    sweep: {{endpoint: [completions, chat]}}
  - scenario: http_prompt_cache
    models: [toy]
    params: {{prefix_tokens: 64, max_tokens: 8}}
  - scenario: greedy_text
    params: {{max_tokens: 8}}
"""


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """(folder, url, pid) of the planted server, a child process of this one."""
    import psutil

    tmp = tmp_path_factory.mktemp("http")
    folder = write_model_folder(tmp / "toy")
    with planted_server(model_dir=folder) as url:
        (pid,) = [
            p.pid
            for p in psutil.Process().children()
            if "tests.servers.planted_openai" in p.cmdline()
        ]
        yield tmp, folder, url, pid


@pytest.fixture(scope="module")
def run(planted):  # type: ignore[no-untyped-def]
    tmp, folder, url, _ = planted
    (tmp / "s.suite.yaml").write_text(SUITE.format(url=url, folder=folder))
    code = main(["run", str(tmp / "s.suite.yaml"), "--report-dir", str(tmp / "r"), "--run-id", "x"])
    record = load_run(tmp / "r" / "x")
    assert code == 0, [(r.case_id, r.reason) for r in record.results]
    return record


def test_every_case_passes_and_the_identity_names_the_server(run) -> None:  # type: ignore[no-untyped-def]
    assert {r.status for r in run.results} == {Status.PASSED}
    assert len(run.results) == 7
    toy = run.models["toy"]
    assert toy.backend == "http" and toy.server and toy.server.startswith("http://127.0.0.1:")
    assert toy.server_models  # what /v1/models listed


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
def test_tokens_counted_per_chunk_agree_with_usage(run, endpoint: str) -> None:  # type: ignore[no-untyped-def]
    (result,) = [
        r
        for r in run.results
        if r.model == "toy" and r.scenario == "http_throughput" and r.point["endpoint"] == endpoint
    ]
    assert result.artifacts["counted_by"] == "tokenizer"
    assert result.artifacts["usage_agrees"] is True
    assert result.artifacts["generated_tokens"] == result.artifacts["usage_completion_tokens"]
    per_chunk = result.metric("http_throughput.tokens_per_chunk")
    assert per_chunk is not None and max(per_chunk.samples) > 1.0  # several tokens a chunk
    itl = result.metric("http_throughput.itl_p50_s")
    assert itl is not None and len(itl.samples) == 3


def test_without_a_tokenizer_a_chunk_counts_as_one_token_and_says_so(run) -> None:  # type: ignore[no-untyped-def]
    result = next(
        r for r in run.results if r.model == "toy-no-tokenizer" and r.scenario == "http_throughput"
    )
    assert result.artifacts["counted_by"] == "chunks"
    assert result.artifacts["usage_agrees"] is False  # the server's count is the truth here


def test_prompt_cache_reports_cached_tokens_and_keeps_the_answer(run) -> None:  # type: ignore[no-untyped-def]
    (result,) = [r for r in run.results if r.scenario == "http_prompt_cache"]
    assert result.status is Status.PASSED  # the repeated prompt got the cold answer
    cached = result.metric("http_prompt_cache.cached_tokens")
    assert cached is not None and min(cached.samples) > 0
    assert result.metric("http_prompt_cache.speedup") is not None
    assert result.artifacts["reuse"].startswith("reused: cached_tokens above 0 in 3 of 3")


def test_greedy_answers_are_kept_per_prompt(run) -> None:  # type: ignore[no-untyped-def]
    answers = {r.model: r.artifacts["outputs"] for r in run.results if r.scenario == "greedy_text"}
    assert set(answers) == {"toy", "toy-no-tokenizer"}
    assert answers["toy"] == answers["toy-no-tokenizer"]  # same server, greedy
    assert len(answers["toy"]) == 4 and all(answers["toy"])


def test_a_local_url_servers_memory_is_the_process_on_its_port(run, planted) -> None:  # type: ignore[no-untyped-def]
    pid = planted[3]
    for result in (r for r in run.results if r.scenario == "http_throughput"):
        assert result.artifacts["server_memory"].endswith(f"of server pid {pid}")
        peak = result.metric("http_throughput.server_peak_bytes")
        assert peak is not None and peak.samples[0] > 0
        assert result.artifacts["server_timing"] == "usage"  # the planted server sends no timings


@pytest.mark.parametrize(
    ("cached", "finding"),
    [
        ([], "not reported: "),
        ([0.0, 0.0, 0.0], "no reuse: cached_tokens 0 in 3 of 3 warm requests"),
        ([0.0, 60.0], "reused: cached_tokens above 0 in 1 of 2"),
    ],
)
def test_reuse_findings(cached: list[float], finding: str) -> None:
    from harness.scenarios.http_prompt_cache import reuse_finding

    assert reuse_finding(cached).startswith(finding)


PLANTED_CACHE_SUITE = """\
schema_version: 1
defaults: {{repeats: 2, warmup: 0, timeout_s: 120}}
models:
  - {{name: toy, url: '{url}', path: {folder}}}
scenarios:
  - scenario: http_prompt_cache
    params: {{prefix_tokens: 64, max_tokens: 8}}
  - scenario: http_prompt_cache
    id: must_reuse
    params: {{prefix_tokens: 64, max_tokens: 8, require_reuse: true}}
"""


def _cache_cases(tmp: Path, plant: Plant) -> dict[str, CaseResult]:
    """``http_prompt_cache`` with and without ``require_reuse`` on a planted server, by id."""
    folder = write_model_folder(tmp / "toy")
    with planted_server(plant, model_dir=folder) as url:
        (tmp / "s.suite.yaml").write_text(PLANTED_CACHE_SUITE.format(url=url, folder=folder))
        main(["run", str(tmp / "s.suite.yaml"), "--report-dir", str(tmp / "r"), "--run-id", "x"])
    return {r.case_id.rsplit("::", 1)[-1]: r for r in load_run(tmp / "r" / "x").results}


def test_a_server_that_reuses_nothing_is_a_finding_unless_reuse_is_required(
    tmp_path: Path,
) -> None:
    by_id = _cache_cases(tmp_path, Plant.NO_CACHED_TOKENS)
    finding, required = by_id["http_prompt_cache"], by_id["must_reuse"]
    assert finding.status is Status.PASSED, finding.reason
    assert finding.artifacts["reuse"].startswith("no reuse: cached_tokens 0 in 2 of 2")
    assert required.status is Status.FAILED
    assert (required.reason or "").startswith("no reuse: cached_tokens 0 in 2 of 2 warm requests;")


def test_a_prompt_blind_server_is_not_judged(tmp_path: Path) -> None:
    """Questions A and B answered alike: a repeated answer matching the cold one proves nothing."""
    for result in _cache_cases(tmp_path, Plant.PROMPT_BLIND).values():
        assert result.status is Status.FAILED
        assert (result.reason or "").startswith(
            "not judged: the model's answer does not depend on the prompt: questions A and B"
        )
