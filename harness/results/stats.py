"""Small, dependency-free statistics for comparing raw samples: Mann-Whitney U and bootstrap.

:func:`min_p_value` and :func:`needed_n` say what a sample size can show at all: with 3 samples
a side the smallest two-sided Mann-Whitney p is 2 / C(6, 3) = 0.1, so nothing is significant at
alpha 0.05 however large the change; 4 a side (p >= 0.029) is the fewest that can be.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from functools import lru_cache


def _ranks(values: Sequence[float]) -> list[float]:
    """Average ranks (1-based), ties sharing the mean of their positions."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@lru_cache(maxsize=256)
def _u_distribution(n1: int, n2: int) -> tuple[int, ...]:
    """Counts of each U value (0..n1*n2) over all arrangements, without ties."""
    # f(i, j) = distribution for i x's and j y's; recurrence on the largest element
    table: dict[tuple[int, int], list[int]] = {}
    for i in range(n1 + 1):
        for j in range(n2 + 1):
            if i == 0 or j == 0:
                table[i, j] = [1]
                continue
            a = [0] * j + table[i - 1, j]  # largest element is an x: it adds j to U
            b = table[i, j - 1]
            size = max(len(a), len(b))
            table[i, j] = [
                (a[k] if k < len(a) else 0) + (b[k] if k < len(b) else 0) for k in range(size)
            ]
    return tuple(table[n1, n2])


def min_p_value(n1: int, n2: int) -> float:
    """Smallest two-sided p the exact Mann-Whitney U test can give for ``n1`` vs ``n2`` samples
    (every sample of one side below every sample of the other): 2 / C(n1 + n2, n1)."""
    if n1 <= 0 or n2 <= 0:
        return 1.0
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def can_reach(n1: int, n2: int, alpha: float) -> bool:
    """Whether ``n1`` vs ``n2`` samples can give a p-value below ``alpha`` at all."""
    return min_p_value(n1, n2) < alpha


def needed_n(alpha: float) -> int:
    """Fewest samples a side (both sides equal) that can show a change significant at ``alpha``."""
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    n = 1
    while not can_reach(n, n, alpha):
        n += 1
    return n


def mann_whitney_u(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U test (exact for small samples without ties)."""
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        return 1.0
    ranks = _ranks([*x, *y])
    r1 = sum(ranks[:n1])
    u1 = r1 - n1 * (n1 + 1) / 2
    u = min(u1, n1 * n2 - u1)
    ties = len(set([*x, *y])) < n1 + n2
    if n1 * n2 <= 400 and not ties:
        counts = _u_distribution(n1, n2)
        total = sum(counts)
        tail = sum(counts[: math.floor(u) + 1]) / total
        return min(1.0, 2 * tail)
    n = n1 + n2
    tie_term = 0.0
    for value in set([*x, *y]):
        t = [*x, *y].count(value)
        tie_term += t**3 - t
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    if sigma == 0:
        return 1.0
    z = (abs(u1 - n1 * n2 / 2) - 0.5) / sigma
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def bootstrap_ratio_ci(
    baseline: Sequence[float],
    current: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of median(current) / median(baseline)."""
    rng = random.Random(seed)
    ratios: list[float] = []
    for _ in range(resamples):
        b = statistics.median(rng.choices(baseline, k=len(baseline)))
        c = statistics.median(rng.choices(current, k=len(current)))
        if b != 0:
            ratios.append(c / b)
    if not ratios:
        return (math.nan, math.nan)
    ratios.sort()
    low = ratios[int((1 - confidence) / 2 * (len(ratios) - 1))]
    high = ratios[int((1 + confidence) / 2 * (len(ratios) - 1))]
    return (low, high)
