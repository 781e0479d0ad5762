"""mlx-lm's own ``LRUPromptCache`` probed on content-bearing zoo models, and the rule that a
cache check on a model whose answer ignores its prompt is not judged.

- eviction order: the installed mlx-lm (0.32.2 in the lock) evicts in insertion order, so the
  entry just fetched goes first (mlx-lm #1495); the same class with recency refreshed on fetch,
  as the upstream fix does, passes;
- a longer entry trimmed to a prompt: right as shipped; a trim that leaves one token of the
  other prompt in the cache changes the answer and fails;
- the in-process ``prompt_cache`` check: a planted wrong prefix fails on the content model; the
  same check on a random model (same answer to every prompt) says "not judged" and never passes.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from harness.backends import BACKENDS
from harness.core.types import Case, Status
from harness.runner.active_run import ActiveRun
from harness.scenarios.prompt_cache import PromptCacheParams
from harness.scenarios.prompt_cache_lru.probes import Order, order_probe, trim_probe
from harness.scenarios.prompts import text_prompt
from tests.installed import require
from tests.runner.cases import path_case

require("mlx_lm")


@pytest.fixture(scope="module")
def content_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from harness.models.zoo.build import build
    from harness.models.zoo.families import FAMILIES

    return build(FAMILIES["llama"], tmp_path_factory.mktemp("zoo") / "llama")


@pytest.fixture(scope="module")
def random_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from harness.models.zoo.build import build
    from harness.models.zoo.families import FAMILIES

    blind = dataclasses.replace(FAMILIES["llama"], content_bearing=False)
    return build(blind, tmp_path_factory.mktemp("zoo") / "llama-random")


@pytest.fixture(scope="module")
def loaded(content_llama: Path) -> Any:
    model, _info = BACKENDS.get("mlx_lm").load(content_llama)
    return model


def _prompts(model: Any, n: int = 48) -> list[list[int]]:
    filler = text_prompt(model, 4 * n)
    return [filler[i * n : (i + 1) * n] for i in range(4)]


def test_the_installed_lru_evicts_the_entry_just_used(loaded: Any) -> None:
    import mlx_lm

    result = order_probe(loaded, _prompts(loaded)[:3], 4)
    if Version(mlx_lm.__version__) <= Version("0.32.2"):
        assert result.outcome == Order.FIFO.value
        assert result.failure is not None
        assert "the entry just fetched was evicted" in result.failure
        assert "mlx-lm/issues/1495" in result.failure
    else:  # a newer mlx-lm in the lock: say what it does, pass or fail, in one line
        assert result.outcome in {o.value for o in Order}


def test_recency_refreshed_on_fetch_passes(loaded: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The upstream fix's behaviour (mlx-lm PR #1496): a fetch moves the entry to the back."""
    from mlx_lm.models.cache import LRUPromptCache

    original = LRUPromptCache.fetch_nearest_cache

    def fetch(self: Any, model: Any, tokens: list[int]) -> Any:
        cache, rest = original(self, model, tokens)
        if cache is not None and not rest:
            for lru in self._lru._lrus.values():
                if (model, tokens) in lru:
                    lru.remove((model, tokens))
                    lru.append((model, tokens))
        return cache, rest

    monkeypatch.setattr(LRUPromptCache, "fetch_nearest_cache", fetch)
    result = order_probe(loaded, _prompts(loaded)[:3], 4)
    assert (result.outcome, result.failure) == (Order.LRU.value, None)


def test_a_longer_entry_trimmed_to_the_prompt(loaded: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = _prompts(loaded)
    right = trim_probe(loaded, prompts[0], prompts[3][:24], 6)
    assert (right.outcome, right.failure) == ("reused 24", None)

    import mlx_lm.models.cache as cache_module

    trim = cache_module.trim_prompt_cache
    monkeypatch.setattr(cache_module, "trim_prompt_cache", lambda c, n: trim(c, n - 1))
    wrong = trim_probe(loaded, prompts[0], prompts[3][:24], 6)
    assert wrong.outcome == "changed answer"
    assert wrong.failure is not None
    assert wrong.failure.startswith("longer entry trimmed to 24 shared tokens: the greedy answer")


def _case(path: Path, **params: Any) -> Case:
    common = {"shape": "shared_prefix", "prompt_tokens": 96, "gen_tokens": 8}
    return path_case(
        path, "llama", "prompt_cache", PromptCacheParams(**common, **params).model_dump()
    )


def test_cache_check_fails_on_a_mixup_and_is_not_judged_on_a_blind_model(
    content_llama: Path, random_llama: Path, tmp_path: Path
) -> None:
    session = ActiveRun(tmp_path, [], run_id="r")
    try:
        right = session.run_case(_case(content_llama))
        mixup = session.run_case(_case(content_llama, self_check="wrong_prefix"))
        blind = session.run_case(_case(random_llama))
        blind_mixup = session.run_case(_case(random_llama, self_check="wrong_prefix"))
    finally:
        session.close_worker()
    assert right.status is Status.PASSED, right.reason
    assert mixup.status is Status.FAILED
    assert "warm output differs from cold at generated token" in (mixup.reason or "")
    # the random model answers the foreign prefix as it answers its own: a mix-up goes unseen...
    assert blind_mixup.status is Status.PASSED
    # ...so its clean run is not a pass either
    assert blind.status is Status.FAILED
    assert (blind.reason or "").startswith(
        "not judged: the model's answer does not depend on the prompt: the prompt with its "
    )


def test_lru_replay_is_not_judged_when_every_answer_is_the_same(loaded: Any) -> None:
    """The content model as loaded, its answers replaced by one constant: the replay's outputs
    still match their cold runs, and that proves nothing, so the case fails saying why."""
    from harness.backends.base import LoadInfo
    from harness.scenarios.base import ScenarioContext
    from harness.scenarios.prompt_cache_lru import SCENARIO, LruParams

    class Blind:  # the loaded model in every respect but its answers
        def __getattr__(self, name: str) -> Any:
            return getattr(loaded, name)

        def generate_cached(self, cache: Any, tokens: Any, *, max_tokens: int, **_: Any) -> Any:
            loaded.prefill(cache, list(tokens))
            return iter([7] * max_tokens)

    def run(model: Any) -> tuple[str, ...]:
        info = LoadInfo(0.0, 0, "cpu")
        ctx = ScenarioContext(model, info, 1, 0, lambda: (model, info))
        return SCENARIO.run(ctx, LruParams(max_size=4)).failures

    assert run(loaded) == ()
    (failure,) = run(Blind())
    assert failure.startswith(
        "not judged: the model's answer does not depend on the prompt: all 12 requests"
    )
