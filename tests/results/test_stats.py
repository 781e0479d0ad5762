"""Mann-Whitney U against scipy's reference p-values; what a sample size can show at all; the
bootstrap of the median against the exact distribution of resampling."""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections import Counter

import pytest

from harness.results.stats import (
    bootstrap_ratio_ci,
    bootstrap_ratio_cis,
    can_reach,
    coefficient_of_variation,
    mann_whitney_u,
    median_ci,
    median_noise,
    min_p_value,
    needed_n,
    relative_ci_width,
    resampled_medians,
    signed_rank_min_p,
    signed_rank_needed,
    wilcoxon_signed_rank,
)

# p-values from scipy 1.17.1, scipy.stats.mannwhitneyu(x, y, alternative="two-sided",
# use_continuity=True, method="exact" without ties and n1*n2 <= 400, else "asymptotic"):
# the same choice harness.results.stats makes. Hard-coded so the table runs without scipy.
SCIPY_REFERENCE = [
    ((1, 2, 3), (4, 5, 6), 0.1),  # 3 vs 3: the smallest p there is
    ((1, 2, 3, 4), (5, 6, 7, 8), 0.02857142857142857),
    ((1, 3, 5, 7, 9), (2, 4, 6, 8, 10), 0.6904761904761905),
    ((10.1, 10.5, 9.8, 10.2, 10.0), (9.0, 9.2, 8.9, 9.4, 9.1), 0.007936507936507936),
    ((1, 2, 3), (4, 5, 6, 7, 8, 9, 10), 0.016666666666666666),
    ((100.0,), (50.0,), 1.0),
    ((1, 1, 2, 2, 3), (2, 3, 3, 4, 4), 0.05241162867102868),  # ties: normal approximation
    ((5, 5, 5), (6, 6, 6), 0.04685417760387376),  # ties: below 0.05, yet only 3 a side
    (tuple(range(25)), tuple(i + 10.5 for i in range(20)), 0.000964739954959277),  # n1*n2 > 400
]


@pytest.mark.parametrize(("x", "y", "expected"), SCIPY_REFERENCE)
def test_matches_scipy_reference_values(
    x: tuple[float, ...], y: tuple[float, ...], expected: float
) -> None:
    assert mann_whitney_u(x, y) == pytest.approx(expected, rel=1e-9)
    assert mann_whitney_u(y, x) == pytest.approx(expected, rel=1e-9)  # two-sided: symmetric


@pytest.mark.parametrize("seed", range(20))
def test_matches_live_scipy_on_random_samples(seed: int) -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(seed)
    n1, n2 = rng.randint(1, 12), rng.randint(1, 12)
    rounding = rng.choice([0, 1, 3])  # coarse rounding makes ties
    x = [round(rng.gauss(10, 2), rounding) for _ in range(n1)]
    y = [round(rng.gauss(11, 2), rounding) for _ in range(n2)]
    ties = len(set(x + y)) < n1 + n2
    method = "exact" if n1 * n2 <= 400 and not ties else "asymptotic"
    ref = stats.mannwhitneyu(x, y, alternative="two-sided", method=method, use_continuity=True)
    assert mann_whitney_u(x, y) == pytest.approx(float(ref.pvalue), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    ("n1", "n2", "expected"),
    [
        (1, 1, 1.0),
        (2, 2, 2 / 6),
        (3, 3, 0.1),
        (3, 4, 2 / 35),
        (4, 4, 2 / 70),
        (5, 5, 2 / 252),
        (3, 5, 2 / 56),
        (0, 5, 1.0),
    ],
)
def test_min_p_value_is_the_exact_tail_of_a_complete_separation(
    n1: int, n2: int, expected: float
) -> None:
    assert min_p_value(n1, n2) == pytest.approx(expected)
    if n1 and n2:  # it is the p of two samples that do not overlap
        separated = mann_whitney_u(range(n1), [n1 + i for i in range(n2)])
        assert separated == pytest.approx(expected)


@pytest.mark.parametrize(
    ("n1", "n2", "alpha", "reachable"),
    [
        (3, 3, 0.05, False),
        (3, 4, 0.05, False),  # 0.057
        (3, 5, 0.05, True),  # 0.036
        (4, 4, 0.05, True),
        (4, 4, 0.01, False),
        (5, 5, 0.01, True),
        (1, 100, 0.05, True),  # 2/101
        (1, 30, 0.05, False),  # 2/31
    ],
)
def test_can_reach(n1: int, n2: int, alpha: float, reachable: bool) -> None:
    assert can_reach(n1, n2, alpha) is reachable


@pytest.mark.parametrize(("alpha", "n"), [(0.05, 4), (0.1, 4), (0.11, 3), (0.01, 5), (0.001, 7)])
def test_needed_n(alpha: float, n: int) -> None:
    assert needed_n(alpha) == n
    assert min_p_value(n, n) < alpha <= min_p_value(n - 1, n - 1)


@pytest.mark.parametrize("alpha", [0.0, -0.1, 1.5, math.nan])
def test_needed_n_rejects_impossible_alpha(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        needed_n(alpha)


# scipy 1.17.1 scipy.stats.wilcoxon(d).pvalue (zero_method="wilcox", correction=False,
# method="auto": exact without ties or zeros up to 50 pairs, the exact sign-flip permutation
# with ties or zeros up to 13, else the normal approximation), hard-coded so it runs without scipy
WILCOXON_REFERENCE = [
    ((1, 2, 3, 4, 5, 6, 7, 8), 0.0078125),  # all 8 one way: 2 / 2^8
    ((1, 2, 3, 4, 5), 0.0625),  # 5 pairs cannot reach 0.05
    ((-1, 2, 3, 4, 5, 6), 0.0625),
    ((1, -2, 3, -4, 5, -6, 7, -8), 0.84375),
    ((0.5, 0.25, -0.1, 0.3, 0.6, 0.05, 0.12, 0.33, -0.02), 0.02734375),
    ((1, 1, 2, 2, -1, 3), 0.125),  # tied magnitudes
    ((1, -2, 3, 4, 1, 2, 0, 0, 5), 0.09375),  # zeros dropped, ties
    ((0.125, 0.125, 0.25, 0.0, 0.0, 0.375, -0.125), 0.25),  # WER-like steps
    (tuple(i - 8.3 for i in range(40)), 1.5435380191775039e-06),  # exact, 40 pairs
    (tuple((i % 7) - 2.0 for i in range(60)), 0.0015264799104482217),  # 51 differ: normal
    (tuple(i * 0.01 + 0.1 * (-1) ** i for i in range(70)), 1.2327252993610063e-12),
]


@pytest.mark.parametrize(("differences", "expected"), WILCOXON_REFERENCE)
def test_signed_rank_matches_scipy_reference_values(
    differences: tuple[float, ...], expected: float
) -> None:
    assert wilcoxon_signed_rank(differences) == pytest.approx(expected, rel=1e-9)
    flipped = [-d for d in differences]  # two-sided: the direction does not matter
    assert wilcoxon_signed_rank(flipped) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("seed", range(20))
def test_signed_rank_matches_live_scipy_where_both_are_exact(seed: int) -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(seed)
    n = rng.randint(1, 13)  # scipy is exact here with ties and zeros too
    rounding = rng.choice([0, 1, 3])
    differences = [round(rng.gauss(0.4, 1), rounding) for _ in range(n)]
    if not any(differences):
        differences[0] = 1.0
    expected = float(stats.wilcoxon(differences).pvalue)
    assert wilcoxon_signed_rank(differences) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("differences", [(), (0.0,), (0, 0, 0, 0, 0, 0, 0)])
def test_no_differing_pair_gives_p_one(differences: tuple[float, ...]) -> None:
    assert wilcoxon_signed_rank(differences) == 1.0


@pytest.mark.parametrize(
    ("n", "expected"), [(0, 1.0), (1, 1.0), (5, 0.0625), (6, 0.03125), (8, 0.0078125)]
)
def test_signed_rank_min_p_is_all_pairs_one_way(n: int, expected: float) -> None:
    assert signed_rank_min_p(n) == expected
    if n:
        assert wilcoxon_signed_rank([float(i + 1) for i in range(n)]) == pytest.approx(expected)


@pytest.mark.parametrize(("alpha", "needed"), [(0.05, 6), (0.01, 8), (0.5, 3), (1.0, 2)])
def test_signed_rank_needed(alpha: float, needed: int) -> None:
    assert signed_rank_needed(alpha) == needed


# (samples, 95% interval of the median by order statistics; None: fewer than 6 samples)
MEDIAN_CI = [
    ((1.0, 2, 3, 4, 5), None),  # 1 - 2 / 2**5 = 0.9375 < 0.95: no interval exists
    ((6.0, 1, 5, 2, 4, 3), (1.0, 6.0)),  # n = 6: the extremes (coverage 0.969)
    (tuple(float(i) for i in range(1, 10)), (2.0, 8.0)),  # n = 9: P(B <= 1) = 0.0195
    (tuple(float(i) for i in range(1, 13)), (3.0, 10.0)),  # n = 12: P(B <= 2) = 0.0193
]


@pytest.mark.parametrize(("samples", "interval"), MEDIAN_CI)
def test_median_ci(samples: tuple[float, ...], interval: tuple[float, float] | None) -> None:
    assert median_ci(samples) == interval


@pytest.mark.parametrize(
    ("samples", "width"),
    [
        ((99.0, 100, 100, 100, 100, 101), 0.02),
        ((100.0,) * 5, math.inf),  # too few for an interval: not known, never "narrow"
        ((0.0,) * 6, math.inf),
        ((99.0, 100, math.nan, 100, 100, 100, 101), 0.02),  # a NaN run is left out
    ],
)
def test_relative_ci_width(samples: tuple[float, ...], width: float) -> None:
    assert relative_ci_width(samples) == pytest.approx(width)


@pytest.mark.parametrize(
    ("samples", "cv"),
    [((90.0, 110.0), 0.1414), ((5.0, 5.0, 5.0), 0.0), ((7.0,), None), ((-1.0, 1.0), None)],
)
def test_coefficient_of_variation(samples: tuple[float, ...], cv: float | None) -> None:
    got = coefficient_of_variation(samples)
    assert got == (None if cv is None else pytest.approx(cv, abs=1e-4))


def test_median_noise_shrinks_with_samples_and_the_cv_does_not() -> None:
    few, many = (90.0, 110.0) * 3, (90.0, 110.0) * 30
    assert coefficient_of_variation(many) == pytest.approx(coefficient_of_variation(few), 0.1)
    assert median_noise(few) == pytest.approx(2.456 * coefficient_of_variation(few) / 6**0.5, 1e-3)
    assert median_noise(many) < median_noise(few) / 3
    assert median_noise((1.0,)) is None


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_a_resampled_median_has_the_distribution_of_resampling(n: int) -> None:
    """Every one of the n^n resamples, enumerated, against 20 000 constant-time draws: the total
    variation distance between the two distributions of the median stays sampling noise."""
    gen = random.Random(n)
    ordered = sorted(gen.gauss(0, 1) for _ in range(n))
    exact = Counter(
        statistics.median(ordered[i] for i in drawn)
        for drawn in itertools.product(range(n), repeat=n)
    )
    import numpy as np

    draws = 20_000
    medians = resampled_medians(np.array(ordered), draws, np.random.default_rng(0))
    drawn = Counter(float(m) for m in medians)
    distance = sum(abs(exact[m] / n**n - drawn[m] / draws) for m in exact.keys() | drawn.keys())
    assert distance / 2 < 0.02


def _rounds(n: int, scale: float, seed: int) -> tuple[float, ...]:
    """``n`` timings around ``scale`` with a few percent of noise, as benchmark rounds have."""
    rng = random.Random(seed)
    return tuple(scale * rng.lognormvariate(0, 0.03) for _ in range(n))


@pytest.mark.parametrize(
    ("rounds", "ratio", "inside", "outside"),
    [
        (5, 2.0, 2.0, 1.0),  # doubled
        (30, 1.0, 1.0, 1.05),  # unchanged
        (100_000, 1.1, 1.1, 1.0),  # 10^5 rounds a side (drawn when the test runs, not collected)
    ],
)
def test_bootstrap_ratio_ci(rounds: int, ratio: float, inside: float, outside: float) -> None:
    baseline, current = _rounds(rounds, 1.0, 2 * rounds), _rounds(rounds, ratio, 2 * rounds + 1)
    low, high = bootstrap_ratio_ci(baseline, current)
    assert low <= inside <= high and not low <= outside <= high


@pytest.mark.parametrize(("baseline", "current"), [((0.0, 0.0, 0.0), (1.0, 2, 3)), ((), (1.0,))])
def test_bootstrap_ratio_ci_without_a_ratio_is_nan(
    baseline: tuple[float, ...], current: tuple[float, ...]
) -> None:
    assert all(math.isnan(bound) for bound in bootstrap_ratio_ci(baseline, current))


def _bootstrap_before_the_shared_draws(
    baseline: tuple[float, ...], current: tuple[float, ...], resamples: int, seed: int
) -> tuple[float, float]:
    """:func:`bootstrap_ratio_ci` as it was before its draws were kept per sample count (a
    generator seeded afresh on every call), verbatim: the reference the kept draws must equal."""
    import numpy as np

    if not baseline or not current:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    b = resampled_medians(np.sort(np.asarray(baseline, dtype=float)), resamples, rng)
    c = resampled_medians(np.sort(np.asarray(current, dtype=float)), resamples, rng)
    keep = b != 0
    if not keep.any():
        return (math.nan, math.nan)
    ratios = np.sort(c[keep] / b[keep])
    last = len(ratios) - 1
    return (float(ratios[int(0.025 * last)]), float(ratios[int(0.975 * last)]))


def _generated_sides(seed: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Two sides of 0-12 samples: lognormal timings, ties (rounded), a NaN, zeros, identical
    sides, one-sample sides, by the seed."""
    rng = random.Random(seed)
    n1, n2 = rng.randint(0, 12), rng.randint(0, 12)
    base = [100 * rng.lognormvariate(0, 0.1) for _ in range(n1)]
    cur = [100 * rng.uniform(0.8, 1.2) * rng.lognormvariate(0, 0.1) for _ in range(n2)]
    kind = seed % 6
    if kind == 1:  # ties
        base, cur = [round(x / 10) * 10.0 for x in base], [round(x / 10) * 10.0 for x in cur]
    elif kind == 2 and cur:  # a NaN sample
        cur[rng.randrange(len(cur))] = math.nan
    elif kind == 3:  # identical sides
        cur = list(base)
    elif kind == 4:  # one sample a side
        base, cur = base[:1], cur[:1]
    elif kind == 5 and base:  # zeros in the baseline
        base[: rng.randint(1, len(base))] = [0.0] * rng.randint(1, len(base))
    return tuple(base), tuple(cur)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("resamples", [2000, 37])
def test_the_bootstrap_with_shared_draws_gives_the_intervals_it_gave_before(
    resamples: int,
) -> None:
    """Over 600 generated pairs of sides (ties, NaN, zeros, 1-sample and identical sides),
    called in a shuffled order so that kept draws are reused across other samples: every
    interval equals, bit for bit, the one a fresh generator gave before."""
    pairs = [_generated_sides(seed) for seed in range(600)]
    random.Random(7).shuffle(pairs)
    kinds = Counter(len(b) == len(c) == 1 or b == c for b, c in pairs)
    assert kinds[True] > 50  # the edge cases are there
    for seed in (0, 3):
        for base, cur in pairs:
            new = bootstrap_ratio_ci(base, cur, resamples=resamples, seed=seed)
            old = _bootstrap_before_the_shared_draws(base, cur, resamples, seed)
            assert all(_same(n, o) for n, o in zip(new, old, strict=True)), (base, cur)


@pytest.mark.parametrize(("resamples", "rows"), [(2000, 512), (2000, 7), (37, 1)])
def test_the_bootstrap_drawn_for_all_pairs_at_once_gives_each_its_interval_as_before(
    resamples: int, rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 600 generated pairs drawn at once (in batches of ``rows``: a batch's last rows
    too): each interval equals, bit for bit, the one a fresh generator gave it alone."""
    from harness.results import stats

    monkeypatch.setattr(stats, "BATCH_ROWS", rows)
    pairs = [_generated_sides(seed) for seed in range(600)]
    random.Random(7).shuffle(pairs)
    for seed in (0, 3):
        drawn = bootstrap_ratio_cis(pairs, resamples=resamples, seed=seed)
        assert len(drawn) == len(pairs)
        for (base, cur), new in zip(pairs, drawn, strict=True):
            old = _bootstrap_before_the_shared_draws(base, cur, resamples, seed)
            assert all(_same(n, o) for n, o in zip(new, old, strict=True)), (base, cur)
    assert bootstrap_ratio_cis([]) == []
