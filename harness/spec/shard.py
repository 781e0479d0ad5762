"""Splitting a plan into shards by model (``--shard I/N``), the same on every machine.

A model never straddles shards: all its cases go to one, so each shard loads it once. Models
are dealt largest first (most cases, then by name) to the shard with the fewest cases so far,
lowest index on a tie. The deal depends only on the plan's case ids and models as the suite
names them (backend and location, never a resolved path), so every machine that plans the same
suites deals the same shards, whatever its Python, hash seed or home folder.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TypeVar

from harness.core.types import Case, Shard

K = TypeVar("K", bound=tuple[str, ...])

_SHARD = re.compile(r"\s*(\d{1,6})\s*/\s*(\d{1,6})\s*")
EXAMPLE = "e.g. --shard 1/3 for the first of three"


class ShardError(ValueError):
    """A ``--shard`` value that is not ``I/N`` with 1 <= I <= N; one line with the fix."""


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/3"`` -> ``(2, 3)``; anything else is a :class:`ShardError`."""
    shown = text if len(text) <= 20 and text.isprintable() else repr(text[:20])
    found = _SHARD.fullmatch(text)
    if found is None:
        raise ShardError(f"--shard {shown}: expected I/N (this job's shard of N), {EXAMPLE}")
    index, count = int(found[1]), int(found[2])
    if count < 1:
        raise ShardError(f"--shard {shown}: N must be 1 or more, {EXAMPLE}")
    if not 1 <= index <= count:
        raise ShardError(f"--shard {shown}: I must be between 1 and {count}, {EXAMPLE}")
    return index, count


def model_of(case: Case) -> tuple[str, str]:
    """What a shard holds whole: the model as the suite names it (backend and location)."""
    return (case.model.backend, case.model.location)


def deal(weights: Mapping[K, int], count: int) -> dict[K, int]:
    """Each key's shard (1..count): heaviest first to the lightest shard, lowest on a tie."""
    loads = [0] * count
    shards: dict[K, int] = {}
    for key in sorted(weights, key=lambda k: (-weights[k], k)):
        lightest = min(range(count), key=lambda i: (loads[i], i))
        loads[lightest] += weights[key]
        shards[key] = lightest + 1
    return shards


def plan_digest(cases: Sequence[Case]) -> str:
    """sha256 of the plan's sorted case ids: equal on every shard of the same plan."""
    text = "\n".join(sorted(c.case_id for c in cases))
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def shard_plan(cases: Sequence[Case], index: int, count: int) -> tuple[Shard, list[Case]]:
    """Shard ``index`` of ``count`` of the whole plan ``cases``: its description and its cases,
    in plan order. A shard may hold no cases (fewer models than shards)."""
    weights = Counter(model_of(c) for c in cases)
    shards = deal(weights, count)
    shard = Shard(
        index=index,
        count=count,
        plan_cases=len(cases),
        plan_models=len(weights),
        plan_sha256=plan_digest(cases),
    )
    return shard, [c for c in cases if shards[model_of(c)] == index]


def shard_line(shard: Shard, cases: int, models: int) -> str:
    """``shard 2/3: 4 of 12 planned cases (2 of 5 models)``, or why a shard is empty."""
    if not cases:
        return (
            f"shard {shard.label}: no cases (the plan's {shard.plan_models} models went to the "
            "other shards); an empty run, by design"
        )
    return (
        f"shard {shard.label}: {cases} of {shard.plan_cases} planned cases "
        f"({models} of {shard.plan_models} models)"
    )
