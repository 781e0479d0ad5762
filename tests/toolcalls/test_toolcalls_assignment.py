"""The cheapest pairing of rows with columns: hand tables, brute force, and scipy where present."""

from __future__ import annotations

import itertools
import random

import pytest

from harness.toolcalls.assignment import cheapest_assignment

# (name, cost matrix, the cheapest assignment)
TABLE: list[tuple[str, list[list[int]], tuple[int, ...]]] = [
    ("empty", [], ()),
    ("one", [[7]], (0,)),
    ("identity", [[0, 1], [1, 0]], (0, 1)),
    ("swap", [[1, 0], [0, 1]], (1, 0)),
    ("three", [[4, 1, 3], [2, 0, 5], [3, 2, 2]], (1, 0, 2)),
    ("negative", [[-5, 0], [0, -1]], (0, 1)),
    ("huge", [[10**30, 0], [0, 10**30]], (1, 0)),  # exact integers, no float rounding
]


@pytest.mark.parametrize(("cost", "want"), [t[1:] for t in TABLE], ids=[t[0] for t in TABLE])
def test_table(cost: list[list[int]], want: tuple[int, ...]) -> None:
    assert cheapest_assignment(cost) == want


def _total(cost: list[list[int]], assignment: tuple[int, ...]) -> int:
    return sum(cost[i][j] for i, j in enumerate(assignment))


@pytest.mark.parametrize("seed", range(40))
def test_matches_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 6)
    cost = [[rng.randint(0, rng.choice((2, 50, 10**12))) for _ in range(n)] for _ in range(n)]
    got = cheapest_assignment(cost)
    assert sorted(got) == list(range(n))
    best = min(_total(cost, p) for p in itertools.permutations(range(n)))
    assert _total(cost, got) == best


@pytest.mark.parametrize("n", [8, 20, 50])
def test_agrees_with_scipy(n: int) -> None:
    optimize = pytest.importorskip("scipy.optimize")
    rng = random.Random(n)
    cost = [[rng.randint(-100, 100) for _ in range(n)] for _ in range(n)]
    rows, columns = optimize.linear_sum_assignment(cost)
    assert _total(cost, cheapest_assignment(cost)) == sum(
        cost[r][c] for r, c in zip(rows, columns, strict=True)
    )


def test_a_ragged_matrix_is_refused() -> None:
    with pytest.raises(ValueError, match="square"):
        cheapest_assignment([[1, 2], [3]])
