"""Sharding a plan by model: ``--shard I/N`` values, the deal, and the split of a plan."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from harness.core.types import Case, ModelRef, ModelSource, Shard
from harness.spec.shard import ShardError, deal, model_of, parse_shard, shard_line, shard_plan


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1/1", (1, 1)), ("2/3", (2, 3)), (" 3 / 3 ", (3, 3)), ("10/12", (10, 12))],
)
def test_parse_shard(text: str, expected: tuple[int, int]) -> None:
    assert parse_shard(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0/3", "--shard 0/3: I must be between 1 and 3, e.g. --shard 1/3"),
        ("4/3", "--shard 4/3: I must be between 1 and 3, e.g. --shard 1/3"),
        ("1/0", "--shard 1/0: N must be 1 or more"),
        ("x", "--shard x: expected I/N"),
        ("2", "--shard 2: expected I/N"),
        ("-1/3", "--shard -1/3: expected I/N"),
        ("1/3\x1b[2J", "--shard '1/3\\x1b[2J': expected I/N"),
    ],
)
def test_bad_shard_is_one_line_with_the_fix(text: str, message: str) -> None:
    with pytest.raises(ShardError) as caught:
        parse_shard(text)
    line = str(caught.value)
    assert line.startswith(message) and "\n" not in line and "\x1b" not in line
    assert "e.g. --shard 1/3" in line


@pytest.mark.parametrize(
    ("weights", "count", "expected"),
    [
        ({("f", "a"): 1}, 1, {("f", "a"): 1}),
        ({("f", "a"): 1}, 3, {("f", "a"): 1}),  # shards 2 and 3 are empty
        # equal weights: dealt in name order
        (
            {("f", "c"): 2, ("f", "a"): 2, ("f", "b"): 2},
            2,
            {("f", "a"): 1, ("f", "b"): 2, ("f", "c"): 1},
        ),
        # heaviest first, each to the lightest shard so far
        (
            {("f", "a"): 1, ("f", "b"): 1, ("f", "c"): 5, ("f", "d"): 3},
            2,
            {("f", "c"): 1, ("f", "d"): 2, ("f", "a"): 2, ("f", "b"): 2},
        ),
    ],
    ids=["one", "more_shards_than_models", "round_robin_by_name", "heaviest_first"],
)
def test_deal(
    weights: dict[tuple[str, str], int], count: int, expected: dict[tuple[str, str], int]
) -> None:
    assert deal(weights, count) == expected


def _case(model: str, scenario: str, backend: str = "fake") -> Case:
    ref = ModelRef(model, ModelSource.PATH, f"./{model}", backend, path=f"/home/x/{model}")
    return Case(f"s::{model}::{scenario}", "s", "s.suite.yaml", ref, scenario, {})


PLAN = [
    _case(m, s)
    for m, scenarios in (
        ("a", ["load", "throughput"]),
        ("b", ["load"]),
        ("c", ["load", "throughput", "prompt_cache"]),
        ("d", ["load"]),
        ("e", ["load", "throughput"]),
    )
    for s in scenarios
]


@pytest.mark.parametrize("count", [1, 2, 3, 5, 7])
def test_every_model_in_exactly_one_shard_and_all_shards_are_the_plan(count: int) -> None:
    shards = [shard_plan(PLAN, i, count) for i in range(1, count + 1)]
    holders = Counter(m for _, cases in shards for m in {model_of(c) for c in cases})
    assert set(holders) == {model_of(c) for c in PLAN} and set(holders.values()) == {1}
    joined = [c.case_id for _, cases in shards for c in cases]
    assert sorted(joined) == sorted(c.case_id for c in PLAN)  # nothing twice, nothing lost
    for index, (shard, cases) in enumerate(shards, start=1):
        assert (shard.index, shard.count, shard.plan_cases, shard.plan_models) == (
            index,
            count,
            len(PLAN),
            5,
        )
        assert cases == [c for c in PLAN if c in cases]  # plan order kept
    assert len({shard.plan_sha256 for shard, _ in shards}) == 1
    sizes = [len(cases) for _, cases in shards]
    assert max(sizes) - min(sizes) <= 3  # within the heaviest model's cases


def test_the_deal_ignores_plan_order_and_resolved_paths() -> None:
    moved = [
        Case(
            c.case_id,
            c.suite,
            c.suite_path,
            ModelRef(**{**vars(c.model), "path": "/other"}),
            c.scenario,
            {},
        )
        for c in reversed(PLAN)
    ]
    for index in (1, 2, 3):
        ids = {c.case_id for c in shard_plan(PLAN, index, 3)[1]}
        assert ids == {c.case_id for c in shard_plan(moved, index, 3)[1]}


SCRIPT = """
import json
from harness.spec.shard import shard_plan
from harness.core.types import Case, ModelRef, ModelSource
plan = [
    Case(f"s::m{i}::l", "s", "x", ModelRef(f"m{i}", ModelSource.PATH, f"./m{i}", "fake"), "l", {})
    for i in range(12)
]
print(json.dumps([[c.case_id for c in shard_plan(plan, i, 4)[1]] for i in (1, 2, 3, 4)]))
"""


def test_the_deal_is_the_same_under_any_hash_seed() -> None:
    dealt = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", SCRIPT],
                env={**os.environ, "PYTHONHASHSEED": seed},
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for seed in ("1", "2")
    ]
    assert dealt[0] == dealt[1] and all(dealt[0])


@pytest.mark.parametrize(
    ("cases", "models", "line"),
    [
        (4, 2, "shard 2/3: 4 of 12 planned cases (2 of 5 models)"),
        (0, 0, "shard 2/3: no cases (the plan's 5 models went to the other shards); an empty run"),
    ],
)
def test_shard_line(cases: int, models: int, line: str) -> None:
    assert shard_line(Shard(2, 3, 12, 5, "x"), cases, models).startswith(line)
