"""Small, dependency-free statistics for comparing raw samples: Mann-Whitney U, bootstrap, and
the Wilcoxon signed-rank test for paired items.

:func:`min_p_value` and :func:`needed_n` say what a sample size can show at all: with 3 samples
a side the smallest two-sided Mann-Whitney p is 2 / C(6, 3) = 0.1, so nothing is significant at
alpha 0.05 however large the change; 4 a side (p >= 0.029) is the fewest that can be. For the
signed-rank test the smallest p is 2 / 2^n over n differing pairs: 6 (p >= 0.031) is the fewest.

scipy is not a dependency of the harness (mlx-audio pulls it in); the tests check these p-values
against ``scipy.stats.wilcoxon`` and ``mannwhitneyu`` where it is installed.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from harness.core.summary import median_ci as median_ci  # lives with the one Summary


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
    tie_term = float(sum(t**3 - t for t in Counter([*x, *y]).values()))
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
    """Percentile bootstrap confidence interval of median(current) / median(baseline).

    Each resample's median is drawn by :func:`resampled_medians` in constant time, all of them
    at once in numpy, so a pytest-benchmark case with 10^5 rounds a side costs what one with 10
    does. The draws depend only on the sample counts, ``resamples`` and ``seed`` (a generator
    seeded with ``seed`` draws the baseline's then the current's), never on the values: they
    are drawn once per (counts, resamples, seed) and kept (:func:`_drawn_pair`), so the metrics
    of a nightly comparison of 10,000 cases, which share a few sample counts, share their draws
    and the interval is the very one a fresh generator gives."""
    import numpy as np

    if not baseline or not current:
        return (math.nan, math.nan)
    base_draws, cur_draws = _drawn_pair(len(baseline), len(current), resamples, seed)
    b = _medians_at(np.sort(np.asarray(baseline, dtype=float)), base_draws)
    c = _medians_at(np.sort(np.asarray(current, dtype=float)), cur_draws)
    keep = b != 0
    if not keep.any():
        return (math.nan, math.nan)
    ratios = np.sort(c[keep] / b[keep])
    last = len(ratios) - 1
    low = ratios[int((1 - confidence) / 2 * last)]
    high = ratios[int((1 + confidence) / 2 * last)]
    return (float(low), float(high))


BATCH_ROWS = 512  # pairs drawn for together, a row each of one array


def bootstrap_ratio_cis(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> list[tuple[float, float]]:
    """:func:`bootstrap_ratio_ci` of every (baseline, current) pair, the very same intervals,
    drawn for all the pairs at once (a nightly's 20,000 metric comparisons are a few dozen
    numpy calls, not 20,000 of each).

    Pairs of the same sample counts share their draws (:func:`_drawn_pair`), and the draws pick
    few distinct medians: of 5 samples, each resample's median is one of the 5. So the 2,000
    ratios of a pair take at most 5 x 5 values, each as often as the draws say
    (:func:`_joint_counts`); the interval's two percentiles are read off these values, sorted,
    with their counts, a row per pair: the values the sorted 2,000 ratios hold at those ranks.
    Sides of many samples (more distinct pairs of medians than resamples), and a pair whose
    resampled baseline median can be 0 or whose ratios are not all finite, are drawn a pair at
    a time, by :func:`bootstrap_ratio_ci`."""
    intervals: list[tuple[float, float]] = [(math.nan, math.nan)] * len(pairs)
    by_counts: dict[tuple[int, int], list[int]] = {}
    for index, (baseline, current) in enumerate(pairs):
        if baseline and current:
            by_counts.setdefault((len(baseline), len(current)), []).append(index)
    last = resamples - 1
    ranks = (int((1 - confidence) / 2 * last), int((1 + confidence) / 2 * last))
    for (n_base, n_cur), members in by_counts.items():
        joint = _joint_counts(n_base, n_cur, resamples, seed)
        many = len(joint[2]) > resamples  # more distinct pairs of medians than resamples
        for start in range(0, len(members), BATCH_ROWS):
            rows = members[start : start + BATCH_ROWS]
            drawn = (
                [None] * len(rows)
                if many
                else _rows_at_ranks(
                    [pairs[i][0] for i in rows], [pairs[i][1] for i in rows], joint, ranks
                )
            )
            for index, interval in zip(rows, drawn, strict=True):
                intervals[index] = interval or bootstrap_ratio_ci(
                    *pairs[index], confidence=confidence, resamples=resamples, seed=seed
                )
    return intervals


# the distinct medians the draws pick (positions into the sorted samples: a row for an odd
# count, two rows to average for an even one) on each side, and how many resamples drew each
# (baseline's, current's) pair of them, flat: baseline's index x current's count + current's
_Joint = tuple[Any, Any, Any]


@lru_cache(maxsize=64)
def _joint_counts(n_base: int, n_cur: int, resamples: int, seed: int) -> _Joint:
    """The draws of :func:`_drawn_pair` as distinct medians a side and their joint counts."""
    import numpy as np

    sides = []
    for low, high in _drawn_pair(n_base, n_cur, resamples, seed):
        positions = np.stack([low] if high is None else [low, high])
        distinct, which = np.unique(positions, axis=1, return_inverse=True)
        sides.append((distinct, which.reshape(-1)))
    (base, base_which), (cur, cur_which) = sides
    counts = np.bincount(
        base_which * cur.shape[1] + cur_which, minlength=base.shape[1] * cur.shape[1]
    )
    return base, cur, counts


def _rows_at_ranks(
    baselines: list[Sequence[float]],
    currents: list[Sequence[float]],
    joint: _Joint,
    ranks: tuple[int, int],
) -> list[tuple[float, float] | None]:
    """Of each row's resampled ratios current / baseline median, sorted, the values at
    ``ranks``; None for a row whose baseline medians hold a 0 or whose ratios are not finite."""
    import numpy as np

    base_at, cur_at, counts = joint
    b = _medians_of_rows(baselines, base_at)
    c = _medians_of_rows(currents, cur_at)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # such rows: None
        ratios = (c[:, None, :] / b[:, :, None]).reshape(len(b), -1)  # as ``counts`` lies
    plain = (b != 0).all(axis=1) & np.isfinite(ratios).all(axis=1)
    order = np.argsort(ratios, axis=1)
    ordered = np.take_along_axis(ratios, order, axis=1)
    drawn_up_to = np.cumsum(counts[order], axis=1)  # resamples at or below each value
    rows = np.arange(len(b))
    low, high = (ordered[rows, (drawn_up_to > rank).argmax(axis=1)].tolist() for rank in ranks)
    return [(lo, hi) if ok else None for ok, lo, hi in zip(plain.tolist(), low, high, strict=True)]


def _medians_of_rows(sides: list[Sequence[float]], at: Any) -> Any:
    """Each side's medians at the distinct positions ``at``, a row a side, computed as
    :func:`_medians_at` computes each resample's (one count of samples for every side)."""
    import numpy as np

    ordered = np.sort(np.asarray(sides, dtype=float), axis=1)
    if len(at) == 1:
        return ordered[:, at[0]]
    return (ordered[:, at[0]] + ordered[:, at[1]]) / 2


# indices into the sorted samples whose values make each resample's median: the lower middle
# and, for an even count, the upper one (None for an odd count)
_Draws = tuple[Any, Any | None]


@lru_cache(maxsize=64)
def _drawn_pair(n_base: int, n_cur: int, resamples: int, seed: int) -> tuple[_Draws, _Draws]:
    """The draws of both sides, in the order one generator seeded with ``seed`` makes them
    (the baseline's, then the current's); read-only arrays, shared by every caller."""
    import numpy as np

    rng = np.random.default_rng(seed)
    pair = (_median_draws(n_base, resamples, rng), _median_draws(n_cur, resamples, rng))
    for draws in pair:
        for indices in draws:
            if indices is not None:
                indices.setflags(write=False)
    return pair


def _median_draws(n: int, size: int, rng: Any) -> _Draws:
    """Which sorted positions make the median of each of ``size`` resamples of ``n`` values
    (see :func:`resampled_medians`)."""
    k = (n + 1) // 2
    u = rng.beta(k, n - k + 1, size)
    low = _drawn_indices(u, n)
    if n % 2:
        return (low, None)
    v = u + (1 - u) * rng.beta(1, n - k, size)
    return (low, _drawn_indices(v, n))


def _medians_at(ordered: Any, draws: _Draws) -> Any:
    """The resampled medians that ``draws`` pick from the sorted array ``ordered``."""
    low, high = draws
    if high is None:
        return ordered[low]
    return (ordered[low] + ordered[high]) / 2


def resampled_medians(ordered: Any, size: int, rng: Any) -> Any:
    """The medians of ``size`` bootstrap resamples (n draws with replacement) of the sorted
    numpy array ``ordered``, as a numpy array.

    The same distribution as the median of ``rng.choice(ordered, n)`` without drawing n
    values: drawing index ``ceil(n U)`` for n uniforms U, the k-th smallest index drawn is
    ``ceil(n U_(k))``, and the k-th smallest of n uniforms is Beta(k, n - k + 1). For even n the
    median also needs the next one, U_(k+1) = U_(k) + (1 - U_(k)) Beta(1, n - k): the smallest
    of the n - k uniforms left above U_(k)."""
    return _medians_at(ordered, _median_draws(len(ordered), size, rng))


def _drawn_indices(u: Any, n: int) -> Any:
    """The 0-based indices that uniforms ``u`` draw from ``n`` values."""
    import numpy as np

    return np.clip(np.ceil(n * u).astype(np.int64) - 1, 0, n - 1)


def relative_ci_width(samples: Sequence[float], confidence: float = 0.95) -> float:
    """Full width of :func:`median_ci` as a fraction of the median; ``inf`` when the interval
    does not exist (too few samples) or the median is 0 or not finite."""
    finite = [s for s in samples if math.isfinite(s)]
    interval = median_ci(finite, confidence)
    if interval is None:
        return math.inf
    middle = statistics.median(finite)
    if middle == 0 or not math.isfinite(middle):
        return math.inf
    return abs(interval[1] - interval[0]) / abs(middle)


def coefficient_of_variation(samples: Sequence[float]) -> float | None:
    """Sample standard deviation / |mean| over the finite samples; None with fewer than 2 of
    them or a mean of 0 (a spread relative to nothing)."""
    finite = [s for s in samples if math.isfinite(s)]
    if len(finite) < 2:
        return None
    mean = statistics.fmean(finite)
    if mean == 0:
        return None
    return statistics.stdev(finite) / abs(mean)


EXACT_PAIRS = 50  # up to this many differing pairs the signed-rank p is exact (scipy's limit too)


def signed_rank_min_p(n: int) -> float:
    """Smallest two-sided p the signed-rank test can give over ``n`` differing pairs: 2 / 2^n."""
    return 1.0 if n <= 0 else min(1.0, 2 / 2**n)


def signed_rank_needed(alpha: float) -> int:
    """Fewest differing pairs whose signed-rank test can reach a p below ``alpha``."""
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    n = 1
    while signed_rank_min_p(n) >= alpha:
        n += 1
    return n


def wilcoxon_signed_rank(differences: Sequence[float]) -> float:
    """Two-sided p of the Wilcoxon signed-rank test on paired differences (current - baseline).

    Zero differences are dropped (Wilcoxon's method, scipy's default); tied magnitudes share
    their average rank. Up to :data:`EXACT_PAIRS` differing pairs the p is exact: the sum of the
    positive ranks against its distribution over all 2^n sign patterns of these very ranks (the
    permutation distribution, exact with ties too). Above, the normal approximation with the tie
    correction and no continuity correction (as scipy). No differing pair at all gives 1.
    """
    nonzero = [d for d in differences if d != 0]
    n = len(nonzero)
    if n == 0:
        return 1.0
    ranks = _ranks([abs(d) for d in nonzero])
    r_plus = sum(r for r, d in zip(ranks, nonzero, strict=True) if d > 0)
    if n <= EXACT_PAIRS:
        doubled = [round(2 * r) for r in ranks]  # average ranks are multiples of 1/2
        counts = [0] * (sum(doubled) + 1)
        counts[0] = 1
        for rank in doubled:  # subsets of ranks by their sum: each rank positive or not
            for total in range(len(counts) - 1, rank - 1, -1):
                counts[total] += counts[total - rank]
        w = round(2 * r_plus)
        low, high = sum(counts[: w + 1]), sum(counts[w:])
        return min(1.0, 2 * min(low, high) / 2**n)
    ties = sum(t**3 - t for t in (ranks.count(r) for r in set(ranks)))
    variance = n * (n + 1) * (2 * n + 1) / 24 - ties / 48
    if variance <= 0:
        return 1.0
    z = (r_plus - n * (n + 1) / 4) / math.sqrt(variance)
    return min(1.0, math.erfc(abs(z) / math.sqrt(2)))


# 95% two-sided normal quantile, and the large-sample ratio of the median's standard error to
# the mean's for normal data (sqrt(pi / 2))
_Z95 = 1.959963984540054
_MEDIAN_SE = math.sqrt(math.pi / 2)


def median_noise(samples: Sequence[float]) -> float | None:
    """How far the median may be off, as a fraction of it: the half-width of its 95% interval
    by the normal approximation, ``1.96 * 1.2533 * CV / sqrt(n)``. It shrinks as samples are
    added (unlike the CV); None with fewer than 2 finite samples."""
    cv = coefficient_of_variation(samples)
    if cv is None:
        return None
    n = sum(1 for s in samples if math.isfinite(s))
    return _Z95 * _MEDIAN_SE * cv / math.sqrt(n)
