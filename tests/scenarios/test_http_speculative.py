"""``http_speculative`` and ``serve: {draft: ...}``: the draft's flags per engine, acceptance
from llama-server's timings, the first differing token of two greedy texts (tables), the
planted break (a scripted server whose drafted answers differ is caught), and mlx_lm.server on
the zoo with its draft."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.backends.base import BackendError, LoadInfo
from harness.backends.http import ServedModel
from harness.backends.openai_client import Endpoint
from harness.backends.server_engines import Draft, ServerEngine, draft_args
from harness.scenarios.base import ScenarioContext, ScenarioOutput
from harness.scenarios.draft_checks import Acceptance
from harness.scenarios.http_speculative import OTHER_TOPIC, SCENARIO, HttpSpeculativeParams
from harness.scenarios.http_speculative.draft import draft_off, server_acceptance, text_mismatch
from harness.spec.errors import SuiteInvalid
from harness.spec.loader import load_suite
from harness.spec.plan import plan
from tests.servers.scripted_openai import scripted_server, stream_chunks


def test_the_draft_flags_per_engine(tmp_path: Path) -> None:
    (tmp_path / "d.gguf").write_bytes(b"GGUF")
    assert draft_args(ServerEngine.MLX_LM, Draft(tmp_path)) == ("--draft-model", str(tmp_path))
    assert draft_args(ServerEngine.MLX_LM, Draft(tmp_path, 3))[-2:] == ("--num-draft-tokens", "3")
    assert draft_args(ServerEngine.LLAMA_SERVER, Draft(tmp_path, 4)) == (
        "-md",
        str(tmp_path / "d.gguf"),
        "--spec-type",
        "draft-simple",  # without it llama-server loads the draft and never uses it
        "--spec-draft-n-max",
        "4",
    )
    with pytest.raises(BackendError, match="takes no draft"):
        draft_args(ServerEngine.MLX_VLM, Draft(tmp_path))


@pytest.mark.parametrize(
    ("timings", "expected"),
    [
        ({"draft_n": 24, "draft_n_accepted": 18}, Acceptance(18, 24)),
        ({"draft_n": 0, "draft_n_accepted": 0}, Acceptance(0, 0)),
        ({"draft_n": 4, "draft_n_accepted": 5}, None),  # more accepted than drafted: nonsense
        ({"draft_n": True, "draft_n_accepted": 1}, None),
        ({"predicted_n": 32}, None),  # a server that says nothing of its draft
    ],
)
def test_acceptance_from_the_servers_timings(timings: Any, expected: Acceptance | None) -> None:
    assert server_acceptance(timings) == expected


def test_the_first_differing_token_is_named_and_escaped() -> None:
    assert text_mismatch("a b c", "a b c", None) is None
    found = text_mismatch("one two three", "one two \x1b[2Jfour", lambda t: len(t.split()))
    assert found is not None and (found.char, found.token) == (8, 2)
    assert found.without_draft == "three" and found.with_draft == "\\x1b[2Jfour"
    shorter = text_mismatch("one two", "one", None)
    assert shorter is not None and shorter.with_draft == "(end)"


def test_the_switch_per_engine() -> None:
    assert draft_off("mlx_lm.server", None) == {"num_draft_tokens": 0}
    assert draft_off("llama-server", None) is None
    assert draft_off("url", {"x": 0}) == {"x": 0}


SUITE = (
    "schema_version: 1\nmodels:\n  - path: {model}\n    serve: {serve}\n"
    "scenarios:\n  - scenario: load\n"
)


def test_serve_draft_resolves_or_says_why(tmp_path: Path, fake_model: Path) -> None:
    suite = tmp_path / "s.suite.yaml"
    serve = f"{{engine: mlx_lm, draft: {{path: {fake_model}}}, draft_tokens: 2}}"
    suite.write_text(SUITE.format(model=fake_model, serve=serve))
    (case,) = plan(load_suite(suite))
    ref = case.model
    assert ref.server is not None
    assert (ref.server.draft, ref.server.draft_tokens) == (str(fake_model), 2)
    serve = "{engine: mlx_lm, draft: {embedded: no-such-model}}"
    suite.write_text(SUITE.format(model=fake_model, serve=serve))
    (case,) = plan(load_suite(suite))
    ref = case.model
    assert ref.server is not None and ref.server.draft is None
    assert "'no-such-model' is no embedded model" in str(ref.server.draft_problem)


@pytest.mark.parametrize(
    ("serve", "message"),
    [
        ("{engine: mlx_vlm, draft: {embedded: zoo/llama}}", "takes no draft"),
        ("{engine: mlx_lm, draft_tokens: 3}", "'draft_tokens' needs a 'draft'"),
    ],
)
def test_serve_draft_misuse_is_one_line(
    tmp_path: Path, fake_model: Path, serve: str, message: str
) -> None:
    suite = tmp_path / "s.suite.yaml"
    suite.write_text(SUITE.format(model=fake_model, serve=serve))
    with pytest.raises(SuiteInvalid, match=message):
        load_suite(suite)


def _words(text: str) -> int:
    return len(text.split())


def scripted(drafted_text: str, *, prompt_blind: bool = False) -> Any:
    """A drafted server of a toy model: the answer without the draft is fixed; with the draft
    it is ``drafted_text`` (the same text: a sound draft; another: a broken one), with
    llama-server-style timings counting its draft. Another prompt (the scenario's check that
    answers depend on the prompt) gets the words in reverse, unless ``prompt_blind``."""
    plain = "the sea is wide and the ships are slow"

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if path == "/v1/models":
            return 200, {"data": [{"id": "scripted"}]}
        drafted = body.get("num_draft_tokens") != 0
        text = drafted_text if drafted else plain
        if str(body.get("prompt", "")).startswith(OTHER_TOPIC) and not prompt_blind:
            text = " ".join(reversed(text.split()))
        pieces = [w + " " for w in text.split()]
        timings = {"draft_n": 6, "draft_n_accepted": 5} if drafted else {}
        usage = {"prompt_tokens": 9, "completion_tokens": len(pieces)}
        return 200, stream_chunks(pieces, usage, timings=timings)

    return answer


def run_against(url: str, **params: Any) -> ScenarioOutput:
    model = ServedModel(Endpoint(url), "url", _words)
    info = LoadInfo(0.0, 0, "http:url")
    ctx = ScenarioContext(model, info, 2, 1, lambda: (model, info))
    return SCENARIO.run(ctx, HttpSpeculativeParams(gen_tokens=9, **params))


PLAIN = "the sea is wide and the ships are slow"


def test_a_sound_draft_passes_with_its_acceptance() -> None:
    with scripted_server(scripted(PLAIN)) as url:
        out = run_against(url, baseline_body={"num_draft_tokens": 0})
    assert out.failures == ()
    figures = {m.name: m.samples for m in out.metrics}
    assert figures["http_speculative.acceptance"] == (5 / 6, 5 / 6)
    assert len(figures["http_speculative.speedup"]) == 2
    assert out.artifacts["first_mismatch"] is None


def test_a_prompt_blind_model_leaves_the_comparison_not_judged() -> None:
    with scripted_server(scripted(PLAIN, prompt_blind=True)) as url:
        out = run_against(url, baseline_body={"num_draft_tokens": 0})
    (line,) = out.failures
    assert line.startswith(
        "not judged: the model's answer does not depend on the prompt: a different prompt got "
        "the same greedy text (39 characters), so the drafted text matching the undrafted one"
    )


def test_planted_break_a_draft_that_changes_the_greedy_output_is_caught() -> None:
    with scripted_server(scripted("the sea is wide and the boats are slow")) as url:
        out = run_against(url, baseline_body={"num_draft_tokens": 0})
    (line,) = out.failures
    assert line.startswith("greedy output changed by the draft in 3 of 3 runs; first at token 6")
    assert "without the draft 'ships are slow" in line and "with it 'boats are slow" in line


def test_without_a_switch_the_comparison_is_left_out_and_said() -> None:
    with scripted_server(scripted("anything else")) as url:
        out = run_against(url)  # a url: server, no baseline_body: no switch known
    assert out.failures == ()
    baseline = str(out.artifacts["baseline"])
    assert baseline.startswith("none: no known per-request switch turns url's draft off")
    assert "no twin: the load recorded no server_engine" in baseline
    names = {m.name for m in out.metrics}
    assert "http_speculative.acceptance" in names and "http_speculative.speedup" not in names


@pytest.mark.real_model
@pytest.mark.slow
def test_mlx_lm_server_with_its_draft_keeps_the_greedy_output(tmp_path: Path) -> None:
    from harness.backends.http import BACKEND
    from harness.core.types import ServerRef
    from harness.models.catalog import find_embedded

    model_dir, draft_dir = find_embedded("zoo/llama"), find_embedded("zoo/llama-draft")
    if model_dir is None or draft_dir is None or not (model_dir.prepared and draft_dir.prepared):
        pytest.skip("needs zoo/llama and zoo/llama-draft prepared")
    server = ServerRef(
        engine="mlx_lm",
        args=("--prompt-cache-size", "0"),  # the draft alone between the two sides
        draft=str(draft_dir.path),
        draft_tokens=3,
    )
    model, info = BACKEND.load_server(model_dir.path, server, tmp_path)
    try:
        ctx = ScenarioContext(model, info, 2, 1, lambda: (model, info))
        out = SCENARIO.run(ctx, HttpSpeculativeParams(prompt_tokens=32, gen_tokens=16))
    finally:
        model.close()  # type: ignore[attr-defined]
    assert (
        "--draft-model"
        in (tmp_path / next(p.name for p in tmp_path.glob("server-*.log"))).read_text()
    )
    assert out.failures == ()
    assert out.artifacts["baseline"] == {"same server, per request": {"num_draft_tokens": 0}}
    assert str(out.artifacts["acceptance_source"]).startswith("unknown: mlx_lm.server")
    assert {m.name for m in out.metrics} >= {
        "http_speculative.speedup",
        "http_speculative.decode_tps",
    }


def test_no_twin_without_a_started_server() -> None:
    from harness.backends.server_twin import twin_problem

    assert twin_problem({"server": "http://127.0.0.1:9"}) == (
        "the load recorded no server_engine: only a server the harness started has a twin"
    )
    started = {"server_engine": "llama_server", "served_file": "/m.gguf", "server_log": "/l"}
    assert twin_problem(started) is None


@pytest.mark.real_model
def test_the_twin_serves_the_same_files_and_stops(tmp_path: Path) -> None:
    from harness.backends.openai_client import get, sync_client
    from harness.backends.server_twin import undrafted_twin
    from harness.models.catalog import find_embedded

    found = find_embedded("zoo/llama")
    if found is None or not found.prepared:
        pytest.skip("needs zoo/llama prepared")
    details = {
        "server_engine": "mlx_lm",
        "served_file": str(found.path),
        "server_args": ["--prompt-cache-size", "0"],
        "server_log": str(tmp_path / "server-mlx_lm-1.log"),
    }
    with undrafted_twin(details) as endpoint, sync_client(30.0) as client:
        assert get(client, endpoint, "/v1/models").ok
    (log,) = tmp_path.glob("server-mlx_lm-*-twin.log")
    argv = log.read_text().splitlines()[0]
    assert "--prompt-cache-size 0" in argv and "--draft-model" not in argv
    with sync_client(5.0) as client:
        assert not get(client, endpoint, "/v1/models").ok  # stopped with the block
