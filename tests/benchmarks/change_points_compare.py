"""Change-point methods on planted nightly series: the previous fit, the harness's fit, and
ruptures (``Pelt``/``Binseg``, noise-scaled penalties), where ruptures can be imported.

Each planted case is run over 20 seeds; a row says in how many the planted step was found at the
right night, and how many steps were found that were not planted (false alarms), then the time
of one fit at 1,095 nights. ruptures is not a dependency: put it on the path from a throwaway
venv (``python3 -m venv /tmp/cpvenv && /tmp/cpvenv/bin/pip install ruptures numpy``)::

    PYTHONPATH=.:/tmp/cpvenv/lib/python3.11/site-packages \\
        .venv/bin/python tests/benchmarks/change_points_compare.py
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.results.change_points import optimal_partition, robust_noise, steps

MIN_EFFECT = 0.05
Fit = Callable[[Sequence[float]], list[int]]  # logs -> indices of the steps (new levels)


@dataclass(frozen=True)
class Case:
    name: str
    nights: int
    planted: tuple[int, ...]  # nights where a level starts
    make: Callable[[random.Random], list[float]]


def _series(
    n: int, rng: random.Random, noise: float = 0.01, **at: float
) -> list[float]:  # at: {"20": -0.2} a level change, {"d5": -0.07} a one-night dip
    level, out = 0.0, []
    for i in range(n):
        level += math.log1p(at.get(f"s{i}", 0.0))
        out.append(level + math.log1p(at.get(f"d{i}", 0.0)) + rng.gauss(0, noise))
    return out


def _flagged_stretch(rng: random.Random) -> list[float]:
    """30 nights, 10..15 flagged (busy machine: slower and noisier); the fit sees the clean
    ones only, as history feeds it."""
    return [v for i, v in enumerate(_series(30, rng)) if not 10 <= i < 16]


def _flagged_fed(rng: random.Random) -> list[float]:
    """The same stretch fed whole (as the previous history did): slow, noisy nights kept."""
    return [
        v + (math.log(rng.uniform(0.6, 1.0)) + rng.gauss(0, 0.08) if 10 <= i < 16 else 0.0)
        for i, v in enumerate(_series(30, rng))
    ]


CASES = (
    Case("20% step at 20 of 40", 40, (20,), lambda r: _series(40, r, s20=-0.2)),
    Case("20% step at 200 of 1095", 1095, (200,), lambda r: _series(1095, r, s200=-0.2)),
    Case("8% step at 15 of 30", 30, (15,), lambda r: _series(30, r, s15=-0.08)),
    Case("step 2 nights from the end", 30, (28,), lambda r: _series(30, r, s28=-0.2)),
    Case("one night 7% dipped of 10", 10, (), lambda r: _series(10, r, d5=-0.07)),
    Case("one night 15% dipped of 10", 10, (), lambda r: _series(10, r, d5=-0.15)),
    Case("one night 40% dipped of 10", 10, (), lambda r: _series(10, r, d5=-0.4)),
    Case("one night 15% dipped of 60", 60, (), lambda r: _series(60, r, d30=-0.15)),
    Case("the last night 30% dipped of 20", 20, (), lambda r: _series(20, r, d19=-0.3)),
    Case("noisy flagged stretch, left out", 24, (), _flagged_stretch),
    Case("noisy flagged stretch, fed whole", 30, (), _flagged_fed),
    Case("noise only, 1095 nights", 1095, (), lambda r: _series(1095, r)),
)


def _noise(logs: Sequence[float]) -> float:
    return max(robust_noise(logs), 1e-9)


def _big(logs: Sequence[float], starts: Sequence[int]) -> list[int]:
    """Starts whose step (median to median) is at least MIN_EFFECT."""
    bounds = [0, *[s for s in starts if s > 0], len(logs)]
    kept = []
    for a, k, b in zip(bounds, bounds[1:], bounds[2:], strict=False):
        before, after = sorted(logs[a:k])[(k - a) // 2], sorted(logs[k:b])[(b - k) // 2]
        if abs(after - before) >= math.log1p(MIN_EFFECT):
            kept.append(k)
    return kept


def previous(logs: Sequence[float]) -> list[int]:
    noise = _noise(logs)
    penalty = max(3 * noise * noise * math.log(max(len(logs), 3)), math.log1p(MIN_EFFECT) ** 2 / 2)
    return _big(logs, optimal_partition(logs, penalty))


def harness_fit(logs: Sequence[float]) -> list[int]:
    return steps(logs, _noise(logs), min_effect=MIN_EFFECT)[1:]


def _ruptures(kind: str, model: str, min_size: int) -> Fit:
    import numpy as np
    import ruptures as rpt

    def fit(logs: Sequence[float]) -> list[int]:
        noise, n = _noise(logs), len(logs)
        scale = noise if model == "l1" else noise * noise
        penalty = scale * 2 * (math.log(n) + 2)
        algo = getattr(rpt, kind)(model=model, min_size=min_size, jump=1)
        ends = algo.fit(np.array(logs).reshape(-1, 1)).predict(pen=penalty)
        return _big(logs, [0, *ends[:-1]])

    return fit


def methods() -> dict[str, Fit]:
    found: dict[str, Fit] = {"previous (exact DP)": previous, "harness (binseg+judge)": harness_fit}
    try:
        import ruptures  # noqa: F401
    except ImportError:
        print("(ruptures not importable: its rows are left out)")
        return found
    for kind, model, size in (
        ("Pelt", "l2", 2),
        ("Binseg", "l2", 2),
        ("Pelt", "l2", 3),
        ("Pelt", "l1", 2),
    ):
        found[f"ruptures {kind} {model} min_size={size}"] = _ruptures(kind, model, size)
    return found


def main() -> None:
    seeds = range(20)
    for name, fit in methods().items():
        print(name)
        for case in CASES:
            placed = alarms = 0
            for seed in seeds:
                got = fit(case.make(random.Random(seed)))
                placed += all(p in got for p in case.planted) if case.planted else 0
                alarms += len([g for g in got if g not in case.planted])
            found = f"{placed:>2}/{len(seeds)} placed" if case.planted else " " * 12
            print(f"  {case.name:<34} {found}  {alarms:>3} false alarms")
        logs = CASES[1].make(random.Random(0))
        start = time.perf_counter()
        fit(logs)
        print(f"  one fit at 1095 nights: {time.perf_counter() - start:.3f} s")


if __name__ == "__main__":
    main()
