"""The cheapest one-to-one pairing of rows with columns of a square cost matrix.

The Hungarian method with potentials (Kuhn–Munkres, O(n³)), on exact integers, so a cost built
from several ranked criteria (see ``harness.toolcalls.match``) is minimised without rounding.
The parallel-call matcher pairs expected calls with returned ones with it, for any number of
calls; scipy's ``linear_sum_assignment`` does the same, but scipy is no dependency here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def cheapest_assignment(cost: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """For each row, its column, such that the summed cost is the least possible.

    ``cost`` is square (n rows of n integers; raises ValueError otherwise)."""
    n = len(cost)
    if any(len(row) != n for row in cost):
        raise ValueError(f"the cost matrix must be square: {n} rows of {n}")
    # Rows and columns are numbered from 1; column 0 is the free row's start in each round.
    row_potential = [0] * (n + 1)
    column_potential = [0] * (n + 1)
    owner = [0] * (n + 1)  # owner[column] = the row it is given to (0: none yet)
    previous = [0] * (n + 1)  # the alternating path back to column 0
    for row in range(1, n + 1):
        owner[0] = row
        column = 0
        slack: list[float] = [math.inf] * (n + 1)
        used = [False] * (n + 1)
        while True:
            used[column] = True
            current = owner[column]
            delta: float = math.inf
            nearest = 0
            for j in range(1, n + 1):
                if used[j]:
                    continue
                reduced = cost[current - 1][j - 1] - row_potential[current] - column_potential[j]
                if reduced < slack[j]:
                    slack[j] = reduced
                    previous[j] = column
                if slack[j] < delta:
                    delta = slack[j]
                    nearest = j
            step = int(delta)  # finite: an unused column was reached just above
            for j in range(n + 1):
                if used[j]:
                    row_potential[owner[j]] += step
                    column_potential[j] -= step
                else:
                    slack[j] -= step
            column = nearest
            if owner[column] == 0:
                break
        while column:
            back = previous[column]
            owner[column] = owner[back]
            column = back
    assignment = [0] * n
    for j in range(1, n + 1):
        assignment[owner[j] - 1] = j - 1
    return tuple(assignment)
