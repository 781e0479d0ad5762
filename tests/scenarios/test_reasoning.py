"""The reasoning scenario: reasoning told apart from the answer (the server's field, think
markup in the content, the think tokens in process) and each part timed; whole runs against
the planted server (clean, its reasoning sent as content, its think block never closed: both
breaks caught) and, where ``make models`` built it, on the zoo's thinker in process (the check
failing where the engine's think markers are hidden)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.backends.base import LoadInfo, ThinkMarkers
from harness.backends.http import ServedModel
from harness.backends.openai_client import Chunk, Endpoint
from harness.scenarios import SCENARIOS
from harness.scenarios.base import ScenarioContext, ScenarioOutput
from harness.scenarios.reasoning import told_apart
from harness.scenarios.reasoning.split import (
    Split,
    prompt_opens_block,
    served_parts,
    token_parts,
)
from tests.servers.planted_process import planted_server
from tests.servers.planted_requests import Plant

THINKER = "zoo/qwen3-thinker"


def chunks(*deltas: dict[str, str]) -> list[Chunk]:
    """One chunk a delta, 10 ms apart."""
    return [
        Chunk(0.01 * (i + 1), {"choices": [{"index": 0, "delta": d}]}, "")
        for i, d in enumerate(deltas)
    ]


# (name, deltas, split, field, closed, reasoning pieces, answer pieces, first answer at)
SERVED = [
    (
        "reasoning_content field",
        [{"reasoning_content": "a"}, {"reasoning_content": "b"}, {"content": "c"}],
        Split.FIELD, "reasoning_content", True, 2, 1, 0.03,
    ),
    (
        "mlx_lm.server's reasoning field, blank line before the answer",
        [{"reasoning": "\n"}, {"reasoning": "x"}, {"content": "\n\n"}, {"content": "y"}],
        Split.FIELD, "reasoning", True, 2, 2, 0.04,
    ),
    (
        "think markup in the content, split here",
        [{"content": "<think>a"}, {"content": " b</think>"}, {"content": "c"}, {"content": "d"}],
        Split.MARKUP, None, True, 2, 2, 0.03,
    ),
    (
        "markup never closed: all reasoning",
        [{"content": "<think>a"}, {"content": " b"}, {"content": " c"}],
        Split.MARKUP, None, False, 3, 0, None,
    ),
    (
        "block opened by the prompt: reasoning up to </think>",
        [{"content": "a"}, {"content": "</think>"}, {"content": "b"}],
        Split.MARKUP, None, True, 1, 1, 0.03,
    ),
    (
        "no reasoning at all",
        [{"content": "a"}, {"content": "b"}],
        Split.NONE, None, True, 0, 2, 0.01,
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("deltas", "split", "field", "closed", "reasoning", "answer", "first_answer"),
    [pytest.param(*row[1:], id=row[0]) for row in SERVED],
)
def test_a_stream_is_split_into_reasoning_and_answer(
    deltas: list[dict[str, str]],
    split: Split,
    field: str | None,
    closed: bool,
    reasoning: int,
    answer: int,
    first_answer: float | None,
) -> None:
    parts = served_parts(chunks(*deltas), None)  # no tokenizer: one token a piece
    assert (parts.split, parts.field, parts.closed) == (split, field, closed)
    assert (parts.reasoning.tokens, parts.answer.tokens) == (reasoning, answer)
    assert parts.first_any_s == pytest.approx(0.01)
    assert parts.first_answer_s == (None if first_answer is None else pytest.approx(first_answer))


MARKERS = ThinkMarkers((7,), (8,), "<think>", "</think>")


def decode(tokens: Sequence[int]) -> str:
    return " ".join(f"t{t}" for t in tokens)


@pytest.mark.parametrize(
    ("tokens", "opened", "reasoning", "answer", "split", "closed"),
    [
        ((7, 1, 2, 8, 3, 4), False, 2, 2, Split.TOKENS, True),
        ((1, 2, 8, 3), True, 2, 1, Split.TOKENS, True),  # the prompt opened the block
        ((7, 1, 2, 3), False, 3, 0, Split.TOKENS, False),
        ((1, 2, 3), False, 0, 3, Split.NONE, True),
        ((7, 1, 8, 3, 9), False, 1, 1, Split.TOKENS, True),  # 9: end of turn, in neither
    ],
)
def test_generated_tokens_are_split_at_the_think_markers(
    tokens: tuple[int, ...], opened: bool, reasoning: int, answer: int, split: Split, closed: bool
) -> None:
    stamps = tuple(0.1 * (i + 1) for i in range(len(tokens)))
    parts = token_parts(tokens, stamps, MARKERS, opened=opened, decode=decode, eos={9})
    assert (parts.reasoning.tokens, parts.answer.tokens) == (reasoning, answer)
    assert (parts.split, parts.closed) == (split, closed)
    assert parts.first_any_s == pytest.approx(0.1)  # the marker itself is the first token


def test_a_prompt_opens_a_block_when_its_last_start_follows_its_last_end() -> None:
    assert prompt_opens_block([1, 7, 2], MARKERS)
    assert not prompt_opens_block([1, 7, 8, 2], MARKERS)
    assert not prompt_opens_block([1, 2], MARKERS)


@pytest.mark.parametrize(
    ("deltas", "finish", "says"),
    [
        ([{"content": "a"}], "stop", "no reasoning apart from the answer"),
        ([{"reasoning": "a"}], "stop", "never closed though the model ended its turn"),
        ([{"reasoning": "a"}], "length", "did not close within max_tokens 8"),
        ([{"reasoning": "a"}, {"content": "b"}], "stop", None),
    ],
)
def test_told_apart_names_what_went_wrong(
    deltas: list[dict[str, str]], finish: str, says: str | None
) -> None:
    parts = served_parts(chunks(*deltas), None)
    why = told_apart(parts, finish, 8)
    assert (why is None) if says is None else (says in str(why))


# -- whole runs ------------------------------------------------------------------------------


def run(model: Any, params: dict[str, Any], backend: str = "http") -> ScenarioOutput:
    scenario = SCENARIOS.get("reasoning")
    info = LoadInfo(0.0, 0, "http:url")
    ctx = ScenarioContext(model, info, 1, 0, lambda: (model, info), backend=backend)
    return scenario.run(ctx, scenario.params_model.model_validate(params))


PLANTED = {"prompts": ["where is it"], "max_tokens": 12, "thinks": True}


@pytest.mark.parametrize(
    ("plant", "fails"),
    [
        (None, None),
        (Plant.THINK_LEAK, None),  # <think> markup left in the content: split here, timed
        (Plant.REASONING_AS_CONTENT, "no reasoning apart from the answer"),
        (Plant.THINK_NEVER_CLOSED, "did not close within max_tokens 12"),
    ],
)
def test_a_reasoning_counted_as_answer_is_caught(plant: Plant | None, fails: str | None) -> None:
    with planted_server(plant) as url:
        out = run(ServedModel(Endpoint(url), "url", None), PLANTED)
    if fails is None:
        assert out.failures == () and out.skip_reason is None
        (answer,) = out.artifacts["answers"]
        assert answer["reasoning_tokens"] > 0 and answer["answer_tokens"] > 0
        assert answer["first_answer_s"] > answer["first_any_s"]
        return
    (line,) = out.failures
    assert line.startswith("reasoning and answer not told apart over HTTP (url) in 1 of 1")
    assert fails in line and "\n" not in line


def test_a_server_with_no_reasoning_and_no_claim_is_not_applicable() -> None:
    with planted_server(None) as url:  # asked with thinking off: the toy does not think
        out = run(
            ServedModel(Endpoint(url), "url", None), {**PLANTED, "thinks": None, "thinking": "off"}
        )
    assert out.skip_reason is not None and out.skip_reason.startswith(
        "not applicable: the model does not think"
    )


# -- the zoo's thinker in process ------------------------------------------------------------


@pytest.fixture(scope="module")
def thinker() -> Any:
    from harness.backends.mlx_lm import BACKEND
    from harness.models.catalog import find_embedded

    found = find_embedded(THINKER)
    if found is None or not found.prepared:
        pytest.skip(f"not prepared: {THINKER} (run `make models`)")
    return BACKEND.load(Path(found.path))[0]


class HiddenMarkers:
    """The thinker with its engine's think markers hidden: what it thinks is not told apart."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.eos_token_ids = model.eos_token_ids
        self.decode = model.decode
        self.stream_tokens = model.stream_tokens
        self.chat_tokens = model.chat_tokens
        self.encode = model.encode
        self.vocab_size = model.vocab_size


def test_the_thinker_passes_and_fails_with_its_markers_hidden(thinker: Any) -> None:
    # the thinker itself passes, thinking on (reasoning, then the answer) and off (the answer
    # alone); the nightly runs suites/reasoning.suite.yaml's zoo part, mlx_lm.server too
    out = run(thinker, {"prompts": ["Where is Paris?"]}, backend="mlx_lm")
    assert out.failures == () and out.artifacts["split"] == ["tokens"]
    (answer,) = out.artifacts["answers"]
    assert answer["reasoning_tokens"] > 0 and answer["answer_tokens"] > 0
    assert answer["first_answer_s"] > answer["first_any_s"]
    off = run(thinker, {"prompts": ["Where is Paris?"], "thinking": "off"}, backend="mlx_lm")
    assert off.failures == () and off.artifacts["off_honoured"] is True
    hidden = HiddenMarkers(thinker)
    out = run(hidden, {"prompts": ["Where is Paris?"], "thinks": True}, backend="mlx_lm")
    (line,) = out.failures
    assert "not told apart in process" in line and "no reasoning apart from the answer" in line
    # and without the parameter, the engine's view: it recognises no markers, n.a.
    out = run(hidden, {"prompts": ["Where is Paris?"]}, backend="mlx_lm")
    assert out.skip_reason is not None and "does not think" in out.skip_reason
