"""Change points on planted series: what must be found where, and what must raise nothing."""

from __future__ import annotations

import math
import random

import pytest

from harness.results.change_points import (
    binary_segmentation,
    optimal_partition,
    robust_noise,
    steps,
)

NOISE = 0.01


def planted(
    n: int, seed: int, *, step: dict[int, float] | None = None, dip: dict[int, float] | None = None
) -> list[float]:
    """``n`` nights of log medians: a level change of ``step[i]`` from night i on, a one-night
    ``dip[i]``, gaussian noise of 1% a night."""
    rng = random.Random(seed)
    level, out = 0.0, []
    for i in range(n):
        level += math.log1p((step or {}).get(i, 0.0))
        out.append(level + math.log1p((dip or {}).get(i, 0.0)) + rng.gauss(0, NOISE))
    return out


# (name, nights, steps planted {night: change}, dips {night: change}, step starts expected)
CASES = [
    ("20% step at 20 of 40", 40, {20: -0.2}, {}, [0, 20]),
    ("20% step at 200 of 1095", 1095, {200: -0.2}, {}, [0, 200]),
    ("8% step at 15 of 30", 30, {15: -0.08}, {}, [0, 15]),
    ("a step up and back down", 60, {20: 0.2, 40: -1 / 6}, {}, [0, 20, 40]),
    ("a step two nights from the end", 30, {28: -0.2}, {}, [0, 28]),
    ("a step one night from the end: not yet", 30, {29: -0.2}, {}, [0]),
    ("one night 7% dipped of 10", 10, {}, {5: -0.07}, [0]),
    ("one night 40% dipped of 10", 10, {}, {5: -0.4}, [0]),
    ("one night 15% dipped of 60", 60, {}, {30: -0.15}, [0]),
    ("the first night dipped", 20, {}, {0: -0.3}, [0]),
    ("the last night dipped", 20, {}, {19: -0.3}, [0]),
    ("noise only, 1095 nights", 1095, {}, {}, [0]),
    ("4% step: under the smallest effect", 40, {20: -0.04}, {}, [0]),
]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(
    ("nights", "step", "dip", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_planted_series(
    nights: int, step: dict[int, float], dip: dict[int, float], expected: list[int], seed: int
) -> None:
    logs = planted(nights, seed, step=step, dip=dip)
    assert steps(logs, robust_noise(logs), min_effect=0.05) == expected


def test_the_previous_fit_took_a_dipped_night_for_two_steps() -> None:
    """What the issue saw: -7% then +7% around one slow night (the exact fit, kept to compare)."""
    logs = planted(10, 0, dip={5: -0.07})
    penalty = max(3 * robust_noise(logs) ** 2 * math.log(10), math.log1p(0.05) ** 2 / 2)
    assert optimal_partition(logs, penalty) == [0, 5, 6]
    assert steps(logs, robust_noise(logs), min_effect=0.05) == [0]


@pytest.mark.parametrize(
    ("values", "expected"),
    [([], []), ([1.0], [0]), ([1.0] * 5 + [2.0] * 5, [0, 5]), ([1.0] * 10, [0])],
)
def test_binary_segmentation_on_exact_values(values: list[float], expected: list[int]) -> None:
    assert binary_segmentation(values, penalty=0.1) == expected


def test_short_series_have_no_step() -> None:
    assert steps([0.0, 0.0, 1.0], 0.01, min_effect=0.05) == [0]
    assert steps([], 0.01, min_effect=0.05) == []


def test_a_series_without_noise_still_judges_steps() -> None:
    assert steps([0.0] * 5 + [0.3] * 5, 0.0, min_effect=0.05) == [0, 5]
    assert steps([0.0] * 5 + [0.01] * 5, 0.0, min_effect=0.05) == [0]
