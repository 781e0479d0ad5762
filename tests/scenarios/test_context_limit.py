"""``context_limit``: each outcome told from the data (table), the window found where each engine
keeps it, the planted breaks caught (a scripted server that truncates the prompt it counts, one
that shifts past its window), and llama-server's own shift (``--context-shift``) on SmolLM2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.backends.base import BackendError, LoadInfo
from harness.backends.http import ServedModel
from harness.backends.openai_client import Endpoint
from harness.scenarios.base import ScenarioContext, ScenarioOutput
from harness.scenarios.context_limit import SCENARIO, ContextLimitParams
from harness.scenarios.context_limit.outcome import (
    Answer,
    Outcome,
    Probe,
    Require,
    Window,
    WindowSource,
    classify,
    failure,
)
from harness.scenarios.context_limit.window import folder_window, window_of_props, window_of_slots
from tests.servers.scripted_openai import completion, scripted_server

SERVER = Window(256, WindowSource.SERVER)
CONFIG = Window(256, WindowSource.MODEL_CONFIG)


@pytest.mark.parametrize(
    ("answer", "window", "outcome"),
    [
        (Answer(200, 8, 200, prompt_tokens=201, completion_tokens=8), SERVER, Outcome.OK),
        (Answer(300, 8, 400, refused=True, failure="HTTP 400: too long"), SERVER, Outcome.ERROR),
        (Answer(300, 8, None, failure="connection reset"), SERVER, Outcome.NO_ANSWER),
        # counted 256 of the 300 sent and answered: the prompt was cut to fit
        (Answer(300, 8, 200, prompt_tokens=248, completion_tokens=8), SERVER, Outcome.TRUNCATED),
        # a server that counts one token (BOS) more or a few fewer is no truncation
        (Answer(300, 8, 200, prompt_tokens=296, completion_tokens=8), CONFIG, Outcome.ACCEPTED),
        (Answer(300, 8, 200, prompt_tokens=300, completion_tokens=8), SERVER, Outcome.SHIFTED),
        (Answer(300, 8, None, prompt_tokens=300, completion_tokens=8), CONFIG, Outcome.ACCEPTED),
        # inside, asking past: 224 + 64 > 256 on the server's own window is a shift
        (Answer(224, 64, 200, prompt_tokens=224, completion_tokens=64), SERVER, Outcome.SHIFTED),
        (Answer(224, 64, 200, prompt_tokens=224, completion_tokens=32), SERVER, Outcome.STOPPED),
        # ended early (EOS) well inside: nothing past the window, nothing to judge
        (Answer(224, 64, 200, prompt_tokens=224, completion_tokens=3), SERVER, Outcome.OK),
        # no usage: what was sent is what was computed (in process, or a server that says none)
        (Answer(300, 8, 200), CONFIG, Outcome.ACCEPTED),
    ],
)
def test_outcomes(answer: Answer, window: Window, outcome: Outcome) -> None:
    assert classify(answer, window) is outcome


@pytest.mark.parametrize(
    ("probe", "outcome", "require", "passes"),
    [
        (Probe.INSIDE, Outcome.OK, Require.ERROR, True),
        (Probe.INSIDE, Outcome.ERROR, Require.ERROR, False),
        (Probe.INSIDE, Outcome.TRUNCATED, Require.NO_SILENT_LOSS, False),
        (Probe.PAST, Outcome.ERROR, Require.ERROR, True),
        (Probe.PAST, Outcome.ACCEPTED, Require.ERROR, False),
        (Probe.PAST, Outcome.ACCEPTED, Require.NO_SILENT_LOSS, True),
        (Probe.PAST, Outcome.TRUNCATED, Require.NO_SILENT_LOSS, False),
        (Probe.PAST, Outcome.SHIFTED, Require.NO_SILENT_LOSS, False),
        (Probe.PAST, Outcome.NO_ANSWER, Require.NO_SILENT_LOSS, False),
        (Probe.GENERATION, Outcome.STOPPED, Require.ERROR, True),
        (Probe.GENERATION, Outcome.SHIFTED, Require.NO_SILENT_LOSS, False),
        (Probe.GENERATION, Outcome.ACCEPTED, Require.ERROR, False),
        (Probe.GENERATION, Outcome.ACCEPTED, Require.NO_SILENT_LOSS, True),
    ],
)
def test_verdicts(probe: Probe, outcome: Outcome, require: Require, passes: bool) -> None:
    answer = Answer(300, 8, 200, prompt_tokens=256, completion_tokens=8)
    assert (failure(probe, answer, SERVER, outcome, require) is None) is passes


def test_a_failure_line_has_the_numbers_and_escapes_the_server() -> None:
    answer = Answer(300, 8, 200, prompt_tokens=248, completion_tokens=8, finish_reason="\x1b[2J")
    line = failure(Probe.PAST, answer, SERVER, Outcome.TRUNCATED, Require.ERROR)
    assert line is not None and line.startswith("silently truncated: past_window: truncated")
    assert "sent 300 tokens" in line and "window 256 (server)" in line
    assert "counted 248 prompt tokens" in line and "answered anyway" in line
    assert "\x1b" not in line and "\\x1b" in line


def test_the_window_where_each_engine_keeps_it(tmp_path: Path) -> None:
    assert window_of_props({"default_generation_settings": {"n_ctx": 256}}) == 256
    assert window_of_props({"default_generation_settings": {}}) is None
    assert window_of_props(["no"]) is None
    assert window_of_slots([{"n_ctx": 512}, {"n_ctx": 256}, {"id": 3}]) == 256
    assert window_of_slots([{"n_ctx": True}]) is None
    (tmp_path / "config.json").write_text(json.dumps({"text_config": {"n_positions": 2048}}))
    found = folder_window(tmp_path)
    assert found is not None and found.tokens == 2048
    assert found.source is WindowSource.MODEL_CONFIG
    beside = folder_window(tmp_path / "model.gguf")  # a file: the config beside it
    assert beside is not None and beside.tokens == 2048
    (tmp_path / "bare").mkdir()
    assert folder_window(tmp_path / "bare") is None
    assert folder_window(None) is None


WINDOW = 256


def _words(text: str) -> int:
    return len(text.split())


def scripted(mode: str) -> Any:
    """A server with a window of 256 words (its tokens): ``refuse`` past it (well behaved),
    ``truncate`` (keeps the last tokens, counts those), ``shift`` (generates on past it)."""

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if path == "/props":
            return 200, {"default_generation_settings": {"n_ctx": WINDOW}}
        if path == "/v1/models":
            return 200, {"data": [{"id": "scripted"}]}
        sent, asked = _words(body["prompt"]), body["max_tokens"]
        if sent > WINDOW and mode == "truncate":
            return 200, completion("x " * asked, WINDOW - asked, asked)
        if sent > WINDOW:
            message = f"request ({sent} tokens) exceeds the context size ({WINDOW} tokens)"
            return 400, {"error": {"code": 400, "message": message}}
        made = asked if mode == "shift" else min(asked, WINDOW - sent)
        return 200, completion("x " * made, sent, made)

    return answer


def run_against(url: str, **params: Any) -> ScenarioOutput:
    model = ServedModel(Endpoint(url), "url", _words)
    ctx = ScenarioContext(model, LoadInfo(0.0, 0, "http:url"), 1, 0, lambda: (model, None))  # type: ignore[arg-type,return-value]
    return SCENARIO.run(ctx, ContextLimitParams(**params))


def test_a_server_that_refuses_passes_with_its_message() -> None:
    with scripted_server(scripted("refuse")) as url:
        out = run_against(url)
    assert out.failures == ()
    assert out.artifacts["outcomes"] == {
        "inside": "ok",
        "past_window": "error",
        "generation_past_window": "stopped",
    }
    assert "exceeds the context size (256 tokens)" in str(out.artifacts["probes"])
    assert {m.name: m.samples for m in out.metrics}["context_limit.window_tokens"] == (256.0,)


def test_planted_break_a_silent_truncation_is_caught() -> None:
    with scripted_server(scripted("truncate")) as url:
        out = run_against(url)
    assert len(out.failures) == 1
    assert out.failures[0].startswith("silently truncated: past_window: truncated: sent 3")
    assert f"counted {WINDOW - 8} prompt tokens" in out.failures[0]


def test_planted_break_a_silent_shift_is_caught() -> None:
    with scripted_server(scripted("shift")) as url:
        out = run_against(url)
    assert [f.split(":")[0] for f in out.failures] == ["silently shifted past the window"]
    assert out.artifacts["outcomes"]["generation_past_window"] == "shifted"


def test_a_window_given_by_params_and_nothing_enforcing_it() -> None:
    """A stated window the server does not hold (mlx_lm.server has none): accepted, a failure
    under require: error, a finding under no_silent_loss."""
    with scripted_server(scripted("refuse")) as url:
        strict = run_against(url, context_tokens=128, check_generation=False)
        lenient = run_against(
            url, context_tokens=128, check_generation=False, require="no_silent_loss"
        )
    assert strict.artifacts["outcomes"]["past_window"] == "accepted"
    assert strict.failures and "require: error" in strict.failures[0]
    assert lenient.failures == ()
    assert "nothing enforces the window of 128 tokens" in str(lenient.artifacts["finding"])


@pytest.mark.real_model
@pytest.mark.slow
@pytest.mark.nightly  # a real llama-server generating past its window: 45-110 s here
def test_llama_server_context_shift_is_caught(tmp_path: Path) -> None:
    """llama-server -c 256: the long prompt is refused (HTTP 400); with --context-shift the
    generation goes on past its window, and the case fails naming it."""
    from harness.backends.http import BACKEND
    from harness.core.types import ServerRef
    from harness.models.catalog import find_embedded
    from harness.models.llama_server import find_llama_server

    found = find_embedded("smollm2-135m-instruct")
    if found is None or not found.prepared or find_llama_server() is None:
        pytest.skip("needs smollm2-135m-instruct prepared and llama-server built")
    server = ServerRef(engine="llama_server", args=("-c", "256", "--context-shift"))
    model, info = BACKEND.load_server(found.path, server, tmp_path)
    try:
        ctx = ScenarioContext(model, info, 1, 0, lambda: (model, info))
        out = SCENARIO.run(ctx, ContextLimitParams())
    finally:
        model.close()  # type: ignore[attr-defined]
    assert out.artifacts["window_source"] == "server"
    assert out.artifacts["outcomes"] == {
        "inside": "ok",
        "past_window": "error",
        "generation_past_window": "shifted",
    }
    assert (
        "exceeds the available context size (256 tokens)" in out.artifacts["probes"]["past_window"]
    )
    assert [f.split(":")[0] for f in out.failures] == ["silently shifted past the window"]


class InProcessModel:
    """A text model in process with a 64-token window in its config.json: it computes past the
    window (as mlx-lm does), or with ``refuses`` raises a BackendError there."""

    eos_token_ids = frozenset({0})

    def __init__(self, path: Path, refuses: bool = False) -> None:
        self.path = path
        self.refuses = refuses

    def encode(self, text: str) -> list[int]:
        return [len(w) + 1 for w in text.split()]

    def decode(self, tokens: Any) -> str:
        return " ".join("x" * t for t in tokens)

    def chat_tokens(self, messages: Any, *, tools: Any = None) -> list[int]:
        return [1]

    def stream_tokens(self, prompt: Any, *, max_tokens: int, **_: Any) -> Any:
        for step in range(max_tokens):
            if self.refuses and len(prompt) + step >= 64:
                raise BackendError(f"position {len(prompt) + step} past the 64 the model has")
            yield 5

    def vocab_size(self) -> int:
        return 100


@pytest.mark.parametrize(
    ("refuses", "outcomes", "failed"),
    [
        (
            False,
            {"inside": "ok", "past_window": "accepted", "generation_past_window": "accepted"},
            False,
        ),
        (True, {"inside": "ok", "past_window": "error", "generation_past_window": "error"}, False),
    ],
)
def test_in_process_the_window_comes_from_the_model_files(
    tmp_path: Path, refuses: bool, outcomes: dict[str, str], failed: bool
) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 64}))
    model = InProcessModel(tmp_path, refuses)
    ctx = ScenarioContext(model, LoadInfo(0.0, 0, "cpu"), 1, 0, lambda: (model, None))  # type: ignore[arg-type,return-value]
    out = SCENARIO.run(ctx, ContextLimitParams(max_tokens=4, margin_tokens=8, overrun_tokens=8))
    assert out.artifacts["outcomes"] == outcomes
    assert out.artifacts["require"] == "no_silent_loss"  # the in-process default
    assert bool(out.failures) is failed
    assert ("finding" in out.artifacts) is not refuses
    strict = SCENARIO.run(ctx, ContextLimitParams(max_tokens=4, margin_tokens=8, require="error"))
    assert bool(strict.failures) is not refuses  # accepted fails under require: error
