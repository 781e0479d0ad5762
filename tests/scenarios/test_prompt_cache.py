"""prompt_cache: token plans per shape, and real runs for every cache type the zoo covers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.core.types import Case, Status
from harness.runner.active_run import ActiveRun
from harness.scenarios.prompt_cache import PromptCacheParams, first_mismatch, plan
from tests.runner.cases import path_case


class WordModel:
    """Just enough of a loaded model for planning: one token per character."""

    def encode(self, text: str) -> list[int]:
        return [ord(c) % 200 + 1 for c in text]

    def vocab_size(self) -> int:
        return 256


@pytest.mark.parametrize(
    ("shape", "reusable"),
    [("exact_repeat", 99), ("shared_prefix", 90), ("divergent_edit", 90), ("multi_turn", 90)],
)
def test_plans(shape: str, reusable: int) -> None:
    p = PromptCacheParams(shape=shape, prompt_tokens=100, reuse_ratio=0.9)  # type: ignore[arg-type]
    result = plan(WordModel(), p)
    assert result.reusable == reusable
    assert result.cached[:reusable] == result.full[:reusable]
    if shape == "divergent_edit":
        assert len(result.cached) == 100 and result.cached[90] != result.full[90]
    if shape == "multi_turn":
        assert len(result.history) == p.turns - 1 and all(result.history)


@pytest.mark.parametrize(
    ("a", "b", "index"),
    [([1, 2, 3], [1, 2, 3], -1), ([1, 2, 3], [1, 9, 3], 1), ([1, 2], [1, 2, 3], 2), ([], [], -1)],
)
def test_first_mismatch(a: list[int], b: list[int], index: int) -> None:
    assert first_mismatch(a, b) == index


def _case(path: Path, key: str, **params: Any) -> Case:
    return path_case(path, key, "prompt_cache", PromptCacheParams(**params).model_dump())


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.zoo_shared import zoo_family

    return {
        name: zoo_family(tmp_path_factory, name)
        for name in ("llama", "gemma3_text", "qwen3", "lfm2")
    }


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ActiveRun]:
    """One worker for the module's real runs, as a run keeps one across its cases (each case
    loads its model afresh: the worker holds one model at a time)."""
    runs = ActiveRun(tmp_path_factory.mktemp("runs"), [], run_id="r")
    try:
        yield runs
    finally:
        runs.close_worker()


# (family, params, expected status, cache types after the hit, reason fragment)
CACHE_TYPES = [
    ("llama", {"shape": "divergent_edit"}, Status.PASSED, ["KVCache"], None),
    (
        "llama",
        {"shape": "divergent_edit", "max_kv_size": 64},
        Status.SKIPPED,
        None,
        "not reusable: RotatingKVCache cannot be trimmed",
    ),
    ("llama", {"shape": "multi_turn", "max_kv_size": 64}, Status.PASSED, ["RotatingKVCache"], None),
    (
        "gemma3_text",
        {"shape": "shared_prefix"},
        Status.PASSED,
        ["KVCache", "RotatingKVCache"],
        None,
    ),
    (
        "gemma3_text",
        {"shape": "divergent_edit"},
        Status.SKIPPED,
        None,
        "RotatingKVCache wrapped past its 64-token window",
    ),
    (
        "qwen3",
        {"shape": "shared_prefix", "kv_bits": 8, "kv_group_size": 32},
        Status.PASSED,
        ["QuantizedKVCache"],
        None,
    ),
    ("lfm2", {"shape": "exact_repeat"}, Status.PASSED, ["ArraysCache", "KVCache"], None),
    ("lfm2", {"shape": "divergent_edit"}, Status.SKIPPED, None, "ArraysCache cannot be trimmed"),
]


@pytest.mark.parametrize(
    ("family", "params", "status", "types", "reason"),
    CACHE_TYPES,
    ids=[f"{c[0]}-{'-'.join(map(str, c[1].values()))}" for c in CACHE_TYPES],
)
def test_every_cache_type_measures_or_says_why_not(
    zoo: dict[str, Path],
    session: ActiveRun,
    family: str,
    params: dict[str, Any],
    status: Status,
    types: list[str] | None,
    reason: str | None,
) -> None:
    result = session.run_case(_case(zoo[family], family, prompt_tokens=160, gen_tokens=6, **params))
    assert result.status is status, result.reason
    if reason is not None:
        assert reason in (result.reason or "")
        return
    assert result.artifacts["cache_types"] == types
    reused = result.metric("prompt_cache.tokens_reused")
    recomputed = result.metric("prompt_cache.tokens_recomputed")
    assert reused is not None and recomputed is not None
    assert reused.median + recomputed.median == result.artifacts["prompt_tokens"]
    speedup = result.metric("prompt_cache.speedup_x")
    assert speedup is not None and speedup.median > 0


def test_a_planted_wrong_reuse_is_caught(zoo: dict[str, Path], session: ActiveRun) -> None:
    """On the zoo's content-bearing llama (its answer depends on the whole prompt), a warm
    run fed the wrong prefix answers differently: the check fails it; the right prefix passes."""
    common = {"shape": "shared_prefix", "prompt_tokens": 120, "gen_tokens": 12}
    wrong = session.run_case(_case(zoo["llama"], "llama", self_check="wrong_prefix", **common))
    right = session.run_case(_case(zoo["llama"], "llama", **common))
    assert wrong.status is Status.FAILED
    assert "warm output differs from cold at generated token" in (wrong.reason or "")
    assert right.status is Status.PASSED, right.reason


@pytest.mark.parametrize(
    ("family", "max_size", "kinds_seen", "evictions"),
    [
        ("llama", 10, {"prefix", "trimmed"}, 0),  # trimmable: longer entries are cut back
        ("llama", 2, {"trimmed"}, 10),
        ("lfm2", 10, {"prefix"}, 2),  # ArraysCache cannot be trimmed: no "trimmed" hits
    ],
)
def test_lru_replay_through_mlx_lm_prompt_cache(
    zoo: dict[str, Path],
    session: ActiveRun,
    family: str,
    max_size: int,
    kinds_seen: set[str],
    evictions: int,
) -> None:
    case = _case(zoo[family], family)
    case = Case(
        **{**case.__dict__, "scenario": "prompt_cache_lru", "params": {"max_size": max_size}}
    )
    result = session.run_case(case)
    assert result.status is Status.PASSED, result.reason  # every hit matched a cold run
    kinds = {k for k, n in result.artifacts["hits_by_kind"].items() if n and k != "miss"}
    assert kinds == kinds_seen
    measured = result.metric("prompt_cache_lru.evictions")
    assert measured is not None and measured.median == evictions
