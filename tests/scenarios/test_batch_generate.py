"""``batch_generate``: the params, the figures and the prompt-dependence rule (pure); the
scenario on a planted batch model (a test-only model whose answer depends on its whole prompt):
a correct batch passes, one request's cache rows shifted or two requests' answers swapped fail
the case naming the request, the batch size and the token; a prompt-blind model is not judged;
a backend without batched generation skips. Then on real zoo models (zoo/llama, and
zoo/gemma3_text's sliding-window cache), tiny: every batched answer equals the answer alone,
and mlx-lm's own batch with one request's KV rows shifted after prefill fails the case."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness.backends.base import BackendCapability, LoadInfo
from harness.backends.fake import FakeModel
from harness.backends.mlx_lm import BACKEND, MlxLmModel
from harness.scenarios import SCENARIOS
from harness.scenarios.base import ScenarioContext, ScenarioOutput
from harness.scenarios.batch_generate import (
    DECODE,
    E2E,
    PER_REQUEST,
    PREFILL,
    SCENARIO,
    BatchGenerateParams,
    BatchRun,
    figures,
    prompt_blind,
)
from harness.scenarios.prompt_dependence import PROMPT_INDEPENDENT

VOCAB = 97


def test_params_sort_the_batch_sizes_and_refuse_an_empty_one() -> None:
    params = BatchGenerateParams()
    assert params.batch_sizes == (1, 2, 4, 8) and params.gen_tokens == 32
    assert BatchGenerateParams(batch_sizes=[4, 1, 4]).batch_sizes == (1, 4)
    for bad in ({"batch_sizes": []}, {"batch_sizes": [0, 2]}, {"prompt_tokens": 4}):
        with pytest.raises(ValidationError):
            BatchGenerateParams.model_validate(bad)
    assert SCENARIOS.get("batch_generate") is SCENARIO
    names = {spec.name for spec in SCENARIO.metrics}
    assert "batch_generate.b*.decode_tps_per_request" in names


def test_the_figures_of_one_batch() -> None:
    run = BatchRun(((1, 2, 3, 4, 5),) * 4, first_s=0.5, last_s=2.5)  # 4 requests, 5 tokens each
    found = figures(run, prompt_tokens=100)
    assert found[PREFILL] == 200.0  # 100 prompt tokens by 0.5 s
    assert found[DECODE] == 8.0  # 4 x 4 tokens after the first in 2 s
    assert found[PER_REQUEST] == 2.0
    assert found[E2E] == 2.5
    one_step = figures(BatchRun(((1,),), 0.5, 0.5), 10)
    assert math.isnan(one_step[DECODE]) and math.isnan(one_step[PER_REQUEST])


@pytest.mark.parametrize(
    ("answers", "judged"),
    [
        ([[1, 2], [1, 3]], True),
        ([[1, 2], [1, 2], [4, 2]], True),
        ([[1, 2], [1, 2], [1, 2]], False),
        ([[1, 2]], True),  # one prompt: nothing to compare it with
    ],
)
def test_prompt_blind_when_every_prompt_gets_one_answer(
    answers: list[list[int]], judged: bool
) -> None:
    line = prompt_blind(answers, 2)
    assert (line is None) is judged
    if line is not None:
        assert line.startswith(PROMPT_INDEPENDENT)


def answer(context: Sequence[int], n: int) -> list[int]:
    """The planted model's greedy answer: each token depends on every token before it, where
    it stands too (a request served another's cache rows, or its own moved, answers otherwise)."""
    seen = list(context)
    out = []
    for _ in range(n):
        token = (sum((i + 1) * t for i, t in enumerate(seen)) + len(seen)) % VOCAB
        out.append(token)
        seen.append(token)
    return out


class PlantedBatch:
    """A test-only batch model: ``stream_batch`` steps through each request's answer; its
    ``break_`` plants a fault: ``shift`` (request 2 decodes from its prompt's rows moved by one,
    as a mis-offset cache row would), ``swap`` (requests 1 and 2 get each other's tokens),
    ``blind`` (every prompt gets one answer, alone and batched)."""

    eos_token_ids = frozenset({0})

    def __init__(self, break_: str | None = None) -> None:
        self.break_ = break_

    def encode(self, text: str) -> list[int]:
        return [ord(c) % VOCAB for c in text]

    def decode(self, tokens: Sequence[int]) -> str:
        return "".join(chr(32 + t) for t in tokens)

    def chat_tokens(self, messages: Sequence[Any], *, tools: Any = None) -> list[int]:
        return []

    def vocab_size(self) -> int:
        return VOCAB

    def _context(self, prompt: Sequence[int]) -> list[int]:
        return [1, 2, 3] if self.break_ == "blind" else list(prompt)

    def stream_tokens(self, prompt: Sequence[int], *, max_tokens: int, **_: Any) -> Iterator[int]:
        yield from answer(self._context(prompt), max_tokens)

    def stream_batch(
        self, prompts: Sequence[Sequence[int]], *, max_tokens: int
    ) -> Iterator[Sequence[tuple[int, int]]]:
        contexts = [self._context(p) for p in prompts]
        if self.break_ == "shift" and len(contexts) > 1:
            contexts[1] = contexts[1][1:] + contexts[1][:1]
        answers = [answer(c, max_tokens) for c in contexts]
        if self.break_ == "swap" and len(answers) > 1:
            answers[0], answers[1] = answers[1], answers[0]
        for step in range(max_tokens):
            yield [(i, a[step]) for i, a in enumerate(answers)]


def _ctx(model: object, *, backend: str = "mlx_lm") -> Any:
    info = LoadInfo(0.0, 0, "cpu")
    return ScenarioContext(model, info, 1, 1, lambda: (model, info), backend)


def _run(model: object, **params: Any) -> ScenarioOutput:
    given = {"batch_sizes": [1, 2, 3], "prompt_tokens": 16, "gen_tokens": 6, **params}
    return SCENARIO.run(_ctx(model), BatchGenerateParams.model_validate(given))


def test_a_correct_batch_passes_with_every_figure_per_batch_size() -> None:
    out = _run(PlantedBatch())
    assert out.failures == () and out.skip_reason is None
    names = {m.name for m in out.metrics}
    assert names == {
        f"batch_generate.b{b}.{s}"
        for b in (1, 2, 3)
        for s in ("prefill_tps", "decode_tps", "decode_tps_per_request", "e2e_s")
    }
    assert all(len(m.samples) == 1 and len(m.warmup_samples) == 1 for m in out.metrics)
    assert out.artifacts["identical"] == {"1": True, "2": True, "3": True}
    assert out.artifacts["prompt_tokens"] == [16, 13, 10]  # distinct lengths: padding runs
    assert out.artifacts["requests_checked"] == 2 * (1 + 2 + 3)


@pytest.mark.parametrize(
    ("break_", "first", "count"),
    [
        ("shift", "first: request 2 at batch size 2 (run 1), token 0:", 2 * 2),
        ("swap", "first: request 1 at batch size 2 (run 1), token 0:", 2 * 2 * 2),
    ],
)
def test_a_planted_break_fails_the_case_naming_request_size_and_token(
    break_: str, first: str, count: int
) -> None:
    out = _run(PlantedBatch(break_))
    (failure,) = out.failures
    assert failure.startswith(
        f"batched greedy answer differs from the single-request answer in {count} of 12 "
    )
    assert first in failure
    assert out.artifacts["identical"] == {"1": True, "2": False, "3": False}
    mismatch = out.artifacts["first_mismatch"]
    assert isinstance(mismatch, dict) and mismatch["batch_size"] == 2
    assert mismatch["alone"] != mismatch["batched"]
    assert out.metrics  # what was measured is kept


def test_a_prompt_blind_model_is_not_judged() -> None:
    (failure,) = _run(PlantedBatch("blind")).failures
    assert failure.startswith(f"{PROMPT_INDEPENDENT}: its 3 distinct prompts all got the same 6")


def test_a_backend_without_batched_generation_skips_with_the_reason() -> None:
    out = SCENARIO.run(_ctx(FakeModel({}), backend="fake"), BatchGenerateParams())
    assert out.skip_reason == "capability_missing: backend fake has no batched generation"
    assert BackendCapability.BATCH_GENERATION in SCENARIO.backend_needs


@pytest.fixture(scope="module")
def gemma3_text(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from harness.models.zoo.build import build
    from harness.models.zoo.families import FAMILIES

    return build(FAMILIES["gemma3_text"], tmp_path_factory.mktemp("zoo") / "gemma3_text")


# gemma3_text's prompts pass its 64-token sliding window: the rotating cache rotates
@pytest.mark.parametrize(("family", "prompt_tokens"), [("tiny_llama", 24), ("gemma3_text", 72)])
def test_real_zoo_models_answer_the_same_batched_as_alone(
    family: str, prompt_tokens: int, request: pytest.FixtureRequest
) -> None:
    model = BACKEND.load(request.getfixturevalue(family))[0]
    out = _run(model, batch_sizes=[1, 3], prompt_tokens=prompt_tokens)
    assert out.failures == () and out.skip_reason is None
    assert out.artifacts["identical"] == {"1": True, "3": True}
    assert out.artifacts["prompt_dependence"] == "depends"


def test_mlx_lm_with_one_request_s_kv_rows_shifted_fails_the_case(
    tiny_llama: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A planted break inside mlx-lm's own batch: after prefill, request 2's keys and values
    are rolled one position along the sequence (its cache rows shifted)."""
    import mlx.core as mx
    from mlx_lm.generate import PromptProcessingBatch

    original = PromptProcessingBatch.generate

    def shifted(self: Any, tokens: list[list[int]]) -> Any:
        for layer in self.prompt_cache:
            if len(self.uids) > 1 and layer.keys is not None:
                for name in ("keys", "values"):
                    rows = getattr(layer, name)
                    rows[1:2] = mx.roll(rows[1:2], 1, axis=2)
        return original(self, tokens)

    monkeypatch.setattr(PromptProcessingBatch, "generate", shifted)
    model: MlxLmModel = BACKEND.load(tiny_llama)[0]
    out = _run(model, batch_sizes=[1, 2], prompt_tokens=24)
    (failure,) = out.failures
    assert "first: request 2 at batch size 2 (run 1), token" in failure
    assert out.artifacts["identical"] == {"1": True, "2": False}


def test_a_case_out_of_time_keeps_what_it_measured() -> None:
    """The case's time limit passed before the runs: timed out, said so, nothing made up."""
    model = PlantedBatch()
    info = LoadInfo(0.0, 0, "cpu")
    ctx = ScenarioContext(model, info, 1, 1, lambda: (model, info), "mlx_lm", case_end=0.0)
    params = BatchGenerateParams(batch_sizes=[2], prompt_tokens=16, gen_tokens=4)
    out = SCENARIO.run(ctx, params)
    assert out.timed_out == "the case's time ran out after 0 of 2 runs"
    assert out.metrics == () and out.failures == ()
