"""``speculative``: acceptance rebuilt from the draft flags and the first mismatch (pure,
table-driven), then the scenario on a real zoo pair (zoo/llama drafted by zoo/llama-draft,
built here): identical greedy output, acceptance and speed-up; the model as its own draft
(acceptance 1); a planted draft path that changes one token (the case fails, naming it); a
backend without draft decoding (skipped with the reason); drafts that cannot be used."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness.backends.base import BackendCapability, DraftedToken, LoadInfo
from harness.backends.fake import FakeModel
from harness.backends.mlx_lm import BACKEND, MlxLmModel
from harness.backends.mlx_lm_draft import vocabulary_mismatch
from harness.scenarios import SCENARIOS
from harness.scenarios.base import ScenarioContext, ScenarioOutput
from harness.scenarios.draft_checks import Acceptance, Mismatch, acceptance, first_mismatch
from harness.scenarios.speculative import SCENARIO, SpeculativeParams

T, F = True, False

# (id, from_draft flags, num_draft_tokens, max_tokens, accepted, drafted)
ACCEPTANCE = [
    ("all_rejected", [F, F, F, F], 3, 4, 0, 3 + 3 + 2 + 1),
    ("all_accepted", [T, T, T, F, T, T, T, F], 3, 8, 6, 6),
    ("accepted_up_to_the_end", [T, T, T, F, T, T], 3, 6, 5, 3 + 2),
    ("partly", [T, F, T, T, F, F], 3, 6, 3, 3 + 3 + 1),
    ("one_at_a_time", [T, F, F, T, F], 1, 5, 2, 1 + 1 + 1),
    ("nothing_generated", [], 3, 4, 0, 0),
]


@pytest.mark.parametrize(
    ("flags", "num_draft", "max_tokens", "accepted", "drafted"),
    [r[1:] for r in ACCEPTANCE],
    ids=[r[0] for r in ACCEPTANCE],
)
def test_acceptance_from_the_draft_flags(
    flags: list[bool], num_draft: int, max_tokens: int, accepted: int, drafted: int
) -> None:
    assert acceptance(flags, num_draft, max_tokens) == Acceptance(accepted, drafted)


def test_acceptance_rate() -> None:
    assert Acceptance(3, 4).rate == 0.75
    assert math.isnan(Acceptance(0, 0).rate)


# (id, without the draft, with it, mismatch)
MISMATCHES: list[tuple[str, list[int], list[int], Mismatch | None]] = [
    ("same", [1, 2, 3], [1, 2, 3], None),
    ("first", [1, 2, 3], [9, 2, 3], Mismatch(0, 1, 9)),
    ("middle", [1, 2, 3, 4], [1, 2, 7, 4], Mismatch(2, 3, 7)),
    ("draft_shorter", [1, 2, 3], [1, 2], Mismatch(2, 3, None)),
    ("draft_longer", [1], [1, 5], Mismatch(1, None, 5)),
    ("both_empty", [], [], None),
]


@pytest.mark.parametrize(
    ("without", "with_draft", "expected"),
    [r[1:] for r in MISMATCHES],
    ids=[r[0] for r in MISMATCHES],
)
def test_first_mismatch(
    without: list[int], with_draft: list[int], expected: Mismatch | None
) -> None:
    assert first_mismatch(without, with_draft) == expected


@pytest.mark.parametrize(
    ("ours", "theirs", "expected"),
    [
        ({"a": 0, "b": 1}, {"a": 0, "b": 1}, None),
        ({"a": 0, "b": 1}, {"a": 0}, "1 tokens against the model's 2"),
        ({"a": 0, "b": 1}, {"a": 0, "c": 1}, "token id 1 is 'b' in the model, not in the draft"),
    ],
)
def test_vocabulary_mismatch(
    ours: dict[str, int], theirs: dict[str, int], expected: str | None
) -> None:
    assert vocabulary_mismatch(ours, theirs) == expected


def test_params_need_a_draft_and_sweep_the_draft_length() -> None:
    with pytest.raises(ValidationError):
        SpeculativeParams.model_validate({})
    with pytest.raises(ValidationError):
        SpeculativeParams.model_validate({"draft": {"embedded": "a", "path": "b"}})
    params = SpeculativeParams.model_validate({"draft": {"embedded": "zoo/llama-draft"}})
    assert params.num_draft_tokens == 3 and params.text_tokens == 64
    with pytest.raises(ValidationError, match="not both"):
        SpeculativeParams.model_validate(
            {"draft": {"path": "d"}, "prompt_tokens": 8, "prompts": ["hi"]}
        )
    assert SCENARIOS.get("speculative") is SCENARIO


def test_the_draft_is_in_the_workload_when_it_resolves(tmp_path: Path) -> None:
    """The preflight's memory estimate counts the draft's weights beside the model's."""
    found = SpeculativeParams(draft={"path": str(tmp_path)}, gen_tokens=8)
    workload = SCENARIO.workload(found)
    assert (workload.prompt_tokens, workload.generated_tokens) == (64, 8)
    assert workload.references == (str(tmp_path),)
    missing = SpeculativeParams(draft={"path": str(tmp_path / "none")})
    assert SCENARIO.workload(missing).references == ()  # the case fails with the reason


@pytest.fixture(scope="module")
def llama_draft(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """zoo/llama's draft: its tokenizer, half as wide, one layer, its own output head."""
    from harness.models.zoo.build import build
    from harness.models.zoo.families_draft import DRAFT_FAMILIES

    return build(DRAFT_FAMILIES["llama-draft"], tmp_path_factory.mktemp("zoo") / "llama-draft")


@pytest.fixture(scope="module")
def llama(tiny_llama: Path) -> MlxLmModel:
    return BACKEND.load(tiny_llama)[0]


def _ctx(model: object, *, repeats: int = 2, warmup: int = 1, backend: str = "mlx_lm") -> Any:
    info = LoadInfo(0.0, 0, "cpu")
    return ScenarioContext(model, info, repeats, warmup, lambda: (model, info), backend)


def _run(model: object, draft: Path, **params: Any) -> ScenarioOutput:
    prompt = {} if "prompts" in params else {"prompt_tokens": 16}
    given = {"draft": {"path": str(draft)}, "gen_tokens": 12, **prompt, **params}
    return SCENARIO.run(_ctx(model), SpeculativeParams.model_validate(given))


def _samples(out: ScenarioOutput) -> dict[str, tuple[float, ...]]:
    return {m.name: m.samples for m in out.metrics}


@pytest.mark.parametrize("num_draft_tokens", [1, 3])
def test_a_zoo_pair_keeps_greedy_output_and_reports_acceptance_and_speedup(
    llama: MlxLmModel, llama_draft: Path, num_draft_tokens: int
) -> None:
    out = _run(llama, llama_draft, num_draft_tokens=num_draft_tokens)
    assert out.failures == () and out.skip_reason is None
    samples = _samples(out)
    assert set(samples) == {spec.name for spec in SCENARIO.metrics}
    assert all(len(values) == 2 for values in samples.values())  # one per measured run
    assert all(0.0 <= a <= 1.0 for a in samples["speculative.acceptance"])
    assert all(s > 0 and math.isfinite(s) for s in samples["speculative.speedup"])  # no speed
    assert out.artifacts["first_mismatch"] is None
    assert out.artifacts["generated_tokens"] == [12, 12]
    assert out.artifacts["num_draft_tokens"] == num_draft_tokens
    drafted = out.artifacts["drafted_tokens"]
    assert isinstance(drafted, list) and all(d >= 12 // (num_draft_tokens + 1) for d in drafted)


def test_the_model_as_its_own_draft_accepts_every_token(
    llama: MlxLmModel, tiny_llama: Path
) -> None:
    out = _run(llama, tiny_llama, num_draft_tokens=3)
    assert out.failures == ()
    assert _samples(out)["speculative.acceptance"] == pytest.approx((1.0, 1.0))
    assert out.artifacts["accepted_tokens"] == out.artifacts["drafted_tokens"]


def test_chat_turns_take_turns_and_a_model_without_a_template_skips(
    llama: MlxLmModel, llama_draft: Path
) -> None:
    out = _run(llama, llama_draft, prompts=["What is the sea?", "Name a colour."])
    assert out.failures == ()
    lengths = out.artifacts["prompt_tokens"]
    assert isinstance(lengths, list) and len(lengths) == 2 and lengths[0] != lengths[1]
    draft = BACKEND.load(llama_draft)[0]  # no chat template: a base model
    out = _run(draft, llama_draft, prompts=["What is the sea?"])
    assert out.skip_reason is not None
    assert out.skip_reason.startswith("capability_mismatch: the model has no chat template")


class FlipsToken(MlxLmModel):
    """A planted break: the draft path gives token ``position`` one id off."""

    position = 5

    def stream_drafted(
        self, prompt: Sequence[int], draft: object, *, max_tokens: int, num_draft_tokens: int
    ) -> Iterator[DraftedToken]:
        steps = super().stream_drafted(
            prompt, draft, max_tokens=max_tokens, num_draft_tokens=num_draft_tokens
        )
        for index, step in enumerate(steps):
            flipped = (step.token + 1) % self.vocab_size()
            yield DraftedToken(flipped, step.from_draft) if index == self.position else step


def test_a_draft_path_that_changes_greedy_output_fails_the_case(
    llama: MlxLmModel, llama_draft: Path
) -> None:
    broken = FlipsToken(llama.model, llama.tokenizer, llama.path)
    out = _run(broken, llama_draft)
    assert len(out.failures) == 1
    failure = out.failures[0]
    assert "greedy output changed by the draft in 3 of 3 runs" in failure
    assert "first at token 5 (run 1)" in failure
    mismatch = out.artifacts["first_mismatch"]
    assert isinstance(mismatch, dict) and mismatch["position"] == 5 and mismatch["run"] == 1
    assert mismatch["with_draft"] == (mismatch["without_draft"] + 1) % llama.vocab_size()
    assert f"without the draft {mismatch['without_draft']} " in failure
    assert out.metrics  # what was measured is kept


def test_a_backend_without_draft_decoding_skips_with_the_reason(llama_draft: Path) -> None:
    params = SpeculativeParams(draft={"path": str(llama_draft)})
    out = SCENARIO.run(_ctx(FakeModel({}), backend="fake"), params)
    assert out.skip_reason == "capability_missing: backend fake has no draft-model decoding"
    assert out.metrics == () and out.failures == ()
    # the preflight skips such a case before its worker starts: tests/runner/test_preflight.py
    assert BackendCapability.DRAFT_DECODING in SCENARIO.backend_needs


def test_drafts_that_cannot_be_used_fail_the_case(
    llama: MlxLmModel, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from tests.zoo_shared import zoo_family

    qwen2 = zoo_family(tmp_path_factory, "qwen2")
    out = _run(llama, qwen2)
    assert len(out.failures) == 1 and "does not share the model's vocabulary" in out.failures[0]
    unknown = SpeculativeParams(draft={"embedded": "zoo/nope"})
    out = SCENARIO.run(_ctx(llama), unknown)
    assert out.failures == ("draft 'zoo/nope' is no embedded model; see `mlx-harness models list`",)


class PromptBlind(MlxLmModel):
    """A planted model whose greedy output ignores the prompt, drafted or not: the draft
    keeping that output proves nothing."""

    def stream_tokens(self, prompt: Sequence[int], **kwargs: Any) -> Iterator[int]:
        return super().stream_tokens([1, 2, 3, 4], **kwargs)

    def stream_drafted(
        self, prompt: Sequence[int], draft: object, *, max_tokens: int, num_draft_tokens: int
    ) -> Iterator[DraftedToken]:
        return super().stream_drafted(
            [1, 2, 3, 4], draft, max_tokens=max_tokens, num_draft_tokens=num_draft_tokens
        )


def test_a_prompt_blind_model_is_not_judged(llama: MlxLmModel, tiny_llama: Path) -> None:
    blind = PromptBlind(llama.model, llama.tokenizer, llama.path)
    out = _run(blind, tiny_llama, num_draft_tokens=3)
    (failure,) = out.failures
    assert failure.startswith(
        "not judged: the model's answer does not depend on the prompt: the prompt with its "
        "first 8 tokens replaced got the same 12 greedy tokens"
    )
